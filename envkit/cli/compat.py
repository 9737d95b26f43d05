"""`envkit compat` and `envkit compat refresh`: typer wiring only."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from envkit.cli.options import JsonFlag

compat_app = typer.Typer(
    help="Show the CUDA/PyTorch/image/driver table, resolve one request, or refresh it."
    "\n\n\b\nExample: envkit compat --torch 2.4.1",
    invoke_without_command=True,
    no_args_is_help=False,
)


@compat_app.callback()
def compat(
    ctx: typer.Context,
    torch: Annotated[
        str | None, typer.Option(metavar="VERSION", help="Resolve this torch release.")
    ] = None,
    cuda: Annotated[
        str | None, typer.Option(metavar="VERSION", help="With --torch: this CUDA version.")
    ] = None,
    flavor: Annotated[
        str, typer.Option(metavar="FLAVOR", help="Base image: pytorch, cuda or custom.")
    ] = "pytorch",
    driver: Annotated[
        str | None, typer.Option(metavar="VERSION", help="Judge this host driver version too.")
    ] = None,
    mirrors: Annotated[
        bool, typer.Option("--mirrors", help="List mirror presets instead.")
    ] = False,
    arch: Annotated[
        str | None,
        typer.Option(
            metavar="ARCH", help="One architecture's builds: amd64 or arm64 (Grace nodes)."
        ),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Show the CUDA/PyTorch/image/driver table, or resolve one request against it.

    \b
    Example: envkit compat --torch 2.4.1 (--arch arm64: on Grace nodes)"""
    if ctx.invoked_subcommand is not None:
        return
    from envkit.commands import compat as command

    request = command.CompatRequest(
        torch=torch,
        cuda=cuda,
        flavor=flavor,
        driver=driver,
        mirrors=mirrors,
        json=as_json,
        arch=arch,
    )
    raise typer.Exit(command.run(request))


@compat_app.command("refresh", short_help="Rebuild the table from its sources.")
def refresh(
    table: Annotated[
        Path | None,
        typer.Option(metavar="PATH", help="compat.yaml to refresh (default: the installed one)."),
    ] = None,
    write: Annotated[bool, typer.Option("--write", help="Write the result into --table.")] = False,
    replay: Annotated[
        Path | None,
        typer.Option(metavar="DIR", help="Read the sources from this recording, not the network."),
    ] = None,
    record: Annotated[
        Path | None,
        typer.Option(metavar="DIR", help="Keep every answer in this (new) folder for replay."),
    ] = None,
) -> None:
    """Rebuild the table's release rows from PyPI, the PyTorch wheel index and Docker Hub (driver
    minimums stay hand-kept) and print the diff.

    \b
    Example: envkit compat refresh --write"""
    from envkit.commands import compat_refresh as command

    request = command.CompatRefreshRequest(table=table, write=write, replay=replay, record=record)
    raise typer.Exit(command.run(request))
