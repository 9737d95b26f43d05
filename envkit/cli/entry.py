"""The `envkit` program's entry point: the spellings of earlier releases translated (with a
note), the app built with only the command the line names (the whole app for help, completion
or a name it does not know), and envkit's errors turned into one message and their exit code."""

from __future__ import annotations

import os
import sys

import typer

from envkit.cli.registry import NAMES, build_app
from envkit.errors import EXIT_INTERRUPTED, EnvkitError

COMPLETE_VAR = "_ENVKIT_COMPLETE"  # as commands/completion.py's scripts set it

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
    app = _app_for(argv)
    try:
        app(args=argv, prog_name="envkit")
    except EnvkitError as exc:
        from envkit.checks.core.text import for_terminal  # compiles its patterns: only on error

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
        from envkit.checks.core.text import for_terminal
        from envkit.engine.client import refused

        error = refused(exc)
        typer.secho(f"error: {for_terminal(error)}", err=True, fg=typer.colors.RED)
        sys.exit(error.exit_code)
    except SystemExit as exc:
        if exc.code == EXIT_INTERRUPTED:  # click turns Ctrl-C into exit 130
            _interrupted()
        raise


def _app_for(argv: list[str]) -> typer.Typer:
    """Only the named command's module is imported; completion and anything else (help, a
    typo, which click answers with the names it knows) get the whole app."""
    if argv and argv[0] in NAMES and COMPLETE_VAR not in os.environ:
        return build_app(only=argv[0])
    from envkit.cli.whole_app import app

    return app


def _interrupted() -> None:
    """Leave at once on Ctrl-C. Worker threads still blocked on a target (docker exec, SSH) would
    keep the interpreter alive until that target's deadline; once the interrupt has unwound the
    stack, nothing of ours is left to clean up, so they are abandoned."""
    import threading

    typer.echo("interrupted", err=True)
    if threading.active_count() > 1:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(EXIT_INTERRUPTED)
    sys.exit(EXIT_INTERRUPTED)
