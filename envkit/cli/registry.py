"""Every command and sub-app, by name, with its one-line summary and where it lives; and the
app built from them: all of them (help, completion, an unknown name) or only the one a command
line names, so `envkit render` does not import the modules of the twenty-four others; and
the commands about the app itself (--version, `envkit completion`).

Help is click's plain formatter (no boxes): paragraphs reflowed to the terminal, up to 120
columns, examples kept as written (`\\b`), boolean options shown as flags, every value named in
words (PATH, NAME, SECONDS), one line per command in the list."""

from __future__ import annotations

from importlib import import_module
from typing import Annotated, Any

import typer
from typer.core import TyperArgument

from envkit import __version__

CONTEXT = {"max_content_width": 120, "help_option_names": ["-h", "--help"]}

# The order of registration is the order of `envkit --help`: the flow, then the rest. Each
# command's summary is one line at 80 columns (click would cut a docstring's first sentence).
# (name, module under envkit.cli, function, summary)
COMMANDS = (
    ("init", "project", "init", "Write a starter envkit.yaml from the project's files."),
    ("render", "project", "render", "Write the Dockerfile, compose file and configs."),
    ("build", "project", "build", "Build the image (or pull it from the registry)."),
    ("up", "project", "up", "Start the environment and wait for sshd."),
    ("push", "share", "push", "Push the built image to the team's registry."),
    ("pull", "share", "pull", "Pull the image these inputs build from the registry."),
    ("down", "project", "down", "Stop and remove the containers."),
    ("start", "project", "start", "Start stopped containers and wait for sshd."),
    ("status", "project", "status", "Each container: state, GPUs, sessions, idle time."),
    ("shell", "box", "shell", "A login shell in the container, without SSH."),
    ("exec", "box", "exec_", "Run one command in the container, without SSH."),
    ("logs", "box", "logs", "What the container printed."),
    ("ssh-config", "project", "ssh_config", "Print ~/.ssh/config blocks for the containers."),
    ("verify", "verify", "verify", "Run the verification suite on the environment."),
    ("health", "verify", "health", "Node health checks for Slurm's HealthCheckProgram."),
    ("metrics", "metrics", "metrics", "Prometheus metrics: checks, GPUs, members."),
    ("doctor", "project", "doctor", "Check this host before anything is built."),
    ("lock", "project", "lock", "Lock the built image's packages in envkit.lock."),
    ("diff", "project", "diff", "What differs between two locks or targets."),
    ("sbom", "project", "sbom", "The image's SBOM from its lock: CycloneDX or SPDX."),
    ("bundle", "share", "bundle", "One folder that carries the environment offline."),
    ("load", "share", "load", "Load a bundle's image into this engine, checked."),
    ("backup", "data", "backup", "Back up members' homes (and the shared cache)."),
    ("restore", "data", "restore", "Put a backup back into its volume."),
    ("schema", "project", "schema", "Print the JSON Schema of envkit.yaml."),
    ("completion", "registry", "completion", "Shell completion for bash, zsh or fish."),
)
# (name, module under envkit.cli, Typer object, summary)
SUB_APPS = (
    ("compat", "compat", "compat_app", "The CUDA/PyTorch/image/driver table."),
    ("history", "history", "history_app", "Recorded verify runs."),
    ("k8s", "k8s", "k8s_app", "Run the suite through Kubernetes."),
    ("notebook", "box", "notebook_app", "JupyterLab: its URL and token."),
    ("member", "data", "member_app", "A departed member's container and home."),
)
NAMES = frozenset(entry[0] for entry in (*COMMANDS, *SUB_APPS))


def _version(value: bool) -> None:
    if value:
        typer.echo(f"envkit {__version__}")
        raise typer.Exit()


def _main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
) -> None:
    """One command from envkit.yaml to a running, verified GPU development environment.

    \b
    Example: envkit init && envkit build && envkit up && envkit verify"""


# How a positional argument shows in help, as click and the tools people use show it: its name
# in words (LEFT, [MEMBER], LOG...), with no Python type after it. Typer 0.29 appends the type
# (`LEFT <str>`) and wraps a required argument in braces (`{LEFT}`); these two methods of its
# argument class are replaced once, in build_app, before any help is rendered.
def _usage_name(self: Any) -> str:
    name = str(self.display_name_raw)
    if not self.required and not name.startswith("["):
        name = f"[{name}]"
    if self.nargs != 1 and not name.endswith("...") and " " not in name:
        name += "..."
    return name


def completion(
    shell: Annotated[
        str | None, typer.Argument(metavar="[SHELL]", help="bash, zsh or fish (default: $SHELL's).")
    ] = None,
    install: Annotated[
        bool,
        typer.Option("--install", help="Write it where the shell reads completions, not stdout."),
    ] = False,
) -> None:
    """Print the shell completion script for bash, zsh or fish, or install it (--install).
    It completes commands, options, members, verify's targets and check ids.

    \b
    Example: envkit completion zsh --install
             source <(envkit completion bash)"""
    from envkit.commands import completion as command

    raise typer.Exit(command.run(command.CompletionRequest(shell=shell, install=install)))


def _member(module: str, attribute: str) -> Any:
    return getattr(import_module(f"envkit.cli.{module}"), attribute)


def build_app(only: str | None = None) -> typer.Typer:
    """The app with every command, or with only the command or sub-app named ONLY (the same
    group, callback and settings, so its usage, help and errors read the same)."""
    TyperArgument._usage_display_name = _usage_name  # type: ignore[method-assign]
    # No type after an argument: its name (its metavar) already says what it takes.
    TyperArgument.display_type_rich = lambda self, ctx: ""  # type: ignore[method-assign]
    app = typer.Typer(
        name="envkit",
        help="One command from envkit.yaml to a running, verified GPU development environment.",
        add_completion=False,  # `envkit completion SHELL` (typer's ignored the shell it was given)
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
        context_settings=CONTEXT,
    )
    app.callback()(_main)
    for name, module, function, summary in COMMANDS:
        if only in (None, name):
            command = _member(module, function)
            app.command(name, short_help=summary, context_settings=CONTEXT)(command)
    for name, module, attribute, summary in SUB_APPS:
        if only in (None, name):
            app.add_typer(_member(module, attribute), name=name, short_help=summary)
    return app
