"""`envkit history` and its subcommands: typer wiring only."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from envkit.cli.options import HistoryFile, JsonFlag

history_app = typer.Typer(
    help="Recorded verify runs: list them, diff two, export or import them."
    "\n\nExample: envkit history --limit 5",
    invoke_without_command=True,
    no_args_is_help=False,
)


@history_app.callback()
def history(
    ctx: typer.Context,
    target: Annotated[str | None, typer.Option("--target", "-t", help="Only this target.")] = None,
    check: Annotated[str | None, typer.Option(help="Show this check's status and figures.")] = None,
    limit: Annotated[int, typer.Option(help="How many recent runs.")] = 20,
    as_json: JsonFlag = False,
    history_file: HistoryFile = None,
) -> None:
    """Recent verify runs, newest first.

    Example: envkit history --limit 5"""
    if ctx.invoked_subcommand is not None:
        return
    from envkit.commands.history import history_list

    raise typer.Exit(history_list(history_file, target, check, limit, as_json))


@history_app.command("diff")
def diff(
    runs: Annotated[
        list[int] | None, typer.Argument(help="RUN_A RUN_B (default: last pass vs latest).")
    ] = None,
    target: Annotated[
        str | None, typer.Option("--target", "-t", help="For the default pair.")
    ] = None,
    as_json: JsonFlag = False,
    history_file: HistoryFile = None,
) -> None:
    """What changed between two runs: versions, image, GPU, checks that flipped, figures moved.

    Example: envkit history diff 12 15"""
    from envkit.commands.history import history_diff

    raise typer.Exit(history_diff(history_file, list(runs or []), target, as_json))


@history_app.command("export")
def export(
    out: Annotated[Path, typer.Argument(help="JSON-lines file to write.")],
    history_file: HistoryFile = None,
) -> None:
    """Write every recorded run as JSON lines.

    Example: envkit history export > runs.jsonl"""
    from envkit.commands.history import history_export

    raise typer.Exit(history_export(history_file, out))


@history_app.command("import")
def import_(
    source: Annotated[Path, typer.Argument(help="A file from `envkit history export`.")],
    history_file: HistoryFile = None,
) -> None:
    """Merge runs exported elsewhere (runs already here are skipped).

    Example: envkit history import runs.jsonl"""
    from envkit.commands.history import history_import

    raise typer.Exit(history_import(history_file, source))
