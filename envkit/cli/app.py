"""The app: every command and sub-app registered, and `main`, where envkit's errors become one
message and their exit code. Heavy modules are imported inside commands so `envkit --help`
stays fast."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from envkit import __version__
from envkit.checks.core.text import for_terminal
from envkit.cli import project, share, verify
from envkit.cli.compat import compat_app
from envkit.cli.history import history_app
from envkit.cli.k8s import k8s_app
from envkit.cli.notebook import notebook_app
from envkit.errors import EXIT_INTERRUPTED, EnvkitError

app = typer.Typer(
    name="envkit",
    help="One command from envkit.yaml to a running, verified GPU development environment.",
    add_completion=True,  # --install-completion / --show-completion: bash, zsh, fish
    no_args_is_help=True,
    pretty_exceptions_enable=False,
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
    """envkit: render, build, run and verify GPU dev environments."""


# The order of registration is the order of `envkit --help`: the flow, then the rest.
for name, command in (
    ("init", project.init),
    ("render", project.render),
    ("build", project.build),
    ("up", project.up),
    ("push", share.push),
    ("pull", share.pull),
    ("down", project.down),
    ("start", project.start),
    ("status", project.status),
    ("ssh-config", project.ssh_config),
    ("verify", verify.verify),
    ("health", verify.health),
    ("doctor", project.doctor),
    ("lock", project.lock),
    ("diff", project.diff),
    ("schema", project.schema),
):
    app.command(name)(command)
app.add_typer(compat_app, name="compat")
app.add_typer(history_app, name="history")
app.add_typer(k8s_app, name="k8s")
app.add_typer(notebook_app, name="notebook")


def main() -> None:
    # typer handles usage errors (exit 2), --help and typer.Exit itself; envkit's own errors
    # propagate out of it and become one message and their exit code here.
    try:
        app()
    except EnvkitError as exc:
        # The message may carry a value from elsewhere (a lock entry, a target's name): shown
        # with its control characters escaped, never acted on by the terminal.
        typer.secho(f"error: {for_terminal(exc)}", err=True, fg=typer.colors.RED)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:  # raised outside click's own handling
        _interrupted()
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
