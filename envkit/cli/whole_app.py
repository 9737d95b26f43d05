"""The app: every command and sub-app registered with its one-line summary, the spellings of
earlier releases translated (with a note), and `main`, where envkit's errors become one message
and their exit code. Commands import their modules when they run, so `envkit --help` stays fast.

Help is click's plain formatter (no boxes): paragraphs reflowed to the terminal, up to 120
columns, examples kept as written (`\\b`), boolean options shown as flags, every value named in
words (PATH, NAME, SECONDS), one line per command in the list."""

from __future__ import annotations

import os
import sys
from typing import Annotated

import typer

from envkit import __version__
from envkit.checks.core.text import for_terminal
from envkit.cli import box, data, metrics, project, share, verify
from envkit.cli.arguments import show_arguments_by_name
from envkit.cli.compat import compat_app
from envkit.cli.completion import completion
from envkit.cli.history import history_app
from envkit.cli.k8s import k8s_app
from envkit.cli.notebook import notebook_app
from envkit.errors import EXIT_INTERRUPTED, EnvkitError

COMPLETE_VAR = "_ENVKIT_COMPLETE"  # as commands/completion.py's scripts set it
show_arguments_by_name()
CONTEXT = {"max_content_width": 120, "help_option_names": ["-h", "--help"]}

app = typer.Typer(
    name="envkit",
    help="One command from envkit.yaml to a running, verified GPU development environment.",
    add_completion=False,  # `envkit completion SHELL` (typer's ignored the shell it was given)
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings=CONTEXT,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"envkit {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
) -> None:
    """One command from envkit.yaml to a running, verified GPU development environment.

    \b
    Example: envkit init && envkit build && envkit up && envkit verify"""


# The order of registration is the order of `envkit --help`: the flow, then the rest. Each
# command's summary is one line at 80 columns (click would cut a docstring's first sentence).
COMMANDS = (
    ("init", project.init, "Write a starter envkit.yaml from the project's files."),
    ("render", project.render, "Write the Dockerfile, compose file and configs."),
    ("build", project.build, "Build the image (or pull it from the registry)."),
    ("up", project.up, "Start the environment and wait for sshd."),
    ("push", share.push, "Push the built image to the team's registry."),
    ("pull", share.pull, "Pull the image these inputs build from the registry."),
    ("down", project.down, "Stop and remove the containers."),
    ("start", project.start, "Start stopped containers and wait for sshd."),
    ("status", project.status, "Each container: state, GPUs, sessions, idle time."),
    ("shell", box.shell, "A login shell in the container, without SSH."),
    ("exec", box.exec_, "Run one command in the container, without SSH."),
    ("logs", box.logs, "What the container printed."),
    ("ssh-config", project.ssh_config, "Print ~/.ssh/config blocks for the containers."),
    ("verify", verify.verify, "Run the verification suite on the environment."),
    ("health", verify.health, "Node health checks for Slurm's HealthCheckProgram."),
    ("metrics", metrics.metrics, "Prometheus metrics: checks, GPUs, members."),
    ("doctor", project.doctor, "Check this host before anything is built."),
    ("lock", project.lock, "Lock the built image's packages in envkit.lock."),
    ("diff", project.diff, "What differs between two locks or targets."),
    ("backup", data.backup, "Back up members' homes (and the shared cache)."),
    ("restore", data.restore, "Put a backup back into its volume."),
    ("schema", project.schema, "Print the JSON Schema of envkit.yaml."),
    ("completion", completion, "Shell completion for bash, zsh or fish."),
)
for name, command, summary in COMMANDS:
    app.command(name, short_help=summary, context_settings=CONTEXT)(command)
app.add_typer(compat_app, name="compat", short_help="The CUDA/PyTorch/image/driver table.")
app.add_typer(history_app, name="history", short_help="Recorded verify runs.")
app.add_typer(k8s_app, name="k8s", short_help="Run the suite through Kubernetes.")
app.add_typer(notebook_app, name="notebook", short_help="JupyterLab: its URL and token.")
app.add_typer(data.member_app, name="member", short_help="A departed member's container and home.")

# Spellings of earlier releases, still accepted: (command, old option, new option). A value
# follows the option in both spellings.
RENAMED = (
    ("verify", "--json", "--json-file"),  # --json is now a flag: the report on stdout
    ("k8s", "--json", "--json-file"),
    ("init", "--path", "--config"),
    ("lock", "--out", "--lock-file"),
    ("lock", "-o", "--lock-file"),
    ("health", "--write", "--program"),
    ("history", "--check", "--only"),
    ("k8s", "--node", "--expect-node"),
)


def translated(argv: list[str]) -> tuple[list[str], list[str]]:
    """ARGV with earlier spellings rewritten, and a note for each. `--json FILE` is the old
    report file only where a value follows (not an option, not the end)."""
    if not argv:
        return argv, []
    if argv[0] in ("--install-completion", "--show-completion"):
        rest = argv[1:2]
        flag = ["--install"] if argv[0] == "--install-completion" else []
        note = f"{argv[0]} is now `envkit completion {' '.join([*rest, *flag]).strip()}`"
        return ["completion", *rest, *flag], [note]
    out, notes = list(argv), []
    for command, old, new in RENAMED:
        if out[0] != command:
            continue
        for index, word in enumerate(out):
            value = out[index + 1] if index + 1 < len(out) else None
            if word == old and (old != "--json" or (value and not value.startswith("-"))):
                out[index] = new
                notes.append(f"`{command} {old}` is now `{new}`")
            elif word.startswith(old + "=") and old.startswith("--"):
                out[index] = new + word[len(old) :]
                notes.append(f"`{command} {old}=` is now `{new}=`")
    return out, notes


def main() -> None:
    # typer handles usage errors (exit 2), --help and typer.Exit itself; envkit's own errors
    # propagate out of it and become one message and their exit code here.
    if COMPLETE_VAR in os.environ:  # the shell asking for completions (envkit completion)
        from typer._completion_classes import completion_init

        completion_init()
    argv, notes = translated(sys.argv[1:])
    for note in notes:
        typer.echo(f"note: {note} (the old spelling still works)", err=True)
    try:
        app(args=argv, prog_name="envkit")
    except EnvkitError as exc:
        # The message may carry a value from elsewhere (a lock entry, a target's name): shown
        # with its control characters escaped, never acted on by the terminal.
        typer.secho(f"error: {for_terminal(exc)}", err=True, fg=typer.colors.RED)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:  # raised outside click's own handling
        _interrupted()
    except Exception as exc:
        if not type(exc).__module__.startswith("docker"):
            raise  # envkit's own bug: its traceback is what a report needs
        # An engine that refused a call no command expected: said, never a traceback.
        from envkit.engine.client import refused

        error = refused(exc)
        typer.secho(f"error: {for_terminal(error)}", err=True, fg=typer.colors.RED)
        sys.exit(error.exit_code)
    except SystemExit as exc:
        if exc.code == EXIT_INTERRUPTED:  # click turns Ctrl-C into exit 130
            _interrupted()
        raise


def _interrupted() -> None:
    """Leave at once on Ctrl-C. Worker threads still blocked on a target (docker exec, SSH) would
    keep the interpreter alive until that target's deadline; once the interrupt has unwound the
    stack, nothing of ours is left to clean up, so they are abandoned."""
    import os
    import threading

    typer.echo("interrupted", err=True)
    if threading.active_count() > 1:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(EXIT_INTERRUPTED)
    sys.exit(EXIT_INTERRUPTED)
