"""`envkit compat` and `envkit compat refresh`: typer wiring only."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from envkit.cli.options import JsonFlag

compat_app = typer.Typer(
    help="Show the CUDA/PyTorch/image/driver table, resolve one request, or refresh it."
    "\n\nExample: envkit compat --torch 2.4.1",
    invoke_without_command=True,
    no_args_is_help=False,
)


@compat_app.callback()
def compat(
    ctx: typer.Context,
    torch: Annotated[str | None, typer.Option(help="Resolve this torch release.")] = None,
    cuda: Annotated[str | None, typer.Option(help="With --torch: this CUDA version.")] = None,
    flavor: Annotated[str, typer.Option(help="pytorch | cuda | custom (which base).")] = "pytorch",
    driver: Annotated[str | None, typer.Option(help="Judge this host driver version too.")] = None,
    mirrors: Annotated[
        bool, typer.Option("--mirrors", help="List mirror presets instead.")
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Show the CUDA/PyTorch/image/driver table, or resolve one request against it.

    Example: envkit compat --torch 2.4.1"""
    if ctx.invoked_subcommand is not None:
        return
    from envkit.commands.compat import compat as run_compat

    raise typer.Exit(run_compat(torch, cuda, flavor, driver, mirrors, as_json))


@compat_app.command("refresh")
def refresh(
    table: Annotated[
        Path | None, typer.Option(help="compat.yaml to refresh (default: the installed one).")
    ] = None,
    write: Annotated[bool, typer.Option("--write", help="Write the result into --table.")] = False,
    replay: Annotated[
        Path | None, typer.Option(help="Read the sources from this recording, not the network.")
    ] = None,
    record: Annotated[
        Path | None, typer.Option(help="Keep every answer in this (new) folder for replay.")
    ] = None,
) -> None:
    """Rebuild the table's release rows from PyPI, the PyTorch wheel index and Docker Hub (driver
    minimums stay hand-kept) and print the diff.

    Example: envkit compat refresh --write"""
    from envkit.commands.compat_refresh import compat_refresh as run_refresh

    raise typer.Exit(run_refresh(table, write, replay, record))
