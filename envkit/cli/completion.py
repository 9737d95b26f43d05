"""`envkit completion`: typer wiring only."""

from __future__ import annotations

from typing import Annotated

import typer


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
