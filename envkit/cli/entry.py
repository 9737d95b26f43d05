"""The `envkit` program's entry point: the app built with only the command the line names (the
whole app for help, completion or a name it does not know), and envkit's errors turned into one
message and their exit code."""

from __future__ import annotations

import os
import sys

import typer

from envkit.cli.registry import NAMES, build_app
from envkit.errors import EXIT_INTERRUPTED, EnvkitError

COMPLETE_VAR = "_ENVKIT_COMPLETE"  # as commands/completion.py's scripts set it


def main() -> None:
    # pydantic looks for plugins by reading every installed distribution's entry points at the
    # first model it builds: a scan of site-packages on every start, for plugins envkit never
    # uses. A user who wants one can still name it in this variable.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    # typer handles usage errors (exit 2), --help and typer.Exit itself; envkit's own errors
    # propagate out of it and become one message and their exit code here.
    if COMPLETE_VAR in os.environ:  # the shell asking for completions (envkit completion)
        from typer._completion_classes import completion_init

        completion_init()
    argv = sys.argv[1:]
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
    named = argv and argv[0] in NAMES and COMPLETE_VAR not in os.environ
    return build_app(only=argv[0] if named else None)


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
