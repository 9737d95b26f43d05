"""`envkit history` and its subcommands: typer wiring only."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from envkit.cli.options import HistoryFile, JsonFlag

history_app = typer.Typer(
    help="Recorded verify runs: list them, diff two, export or import them."
    "\n\n\b\nExample: envkit history --limit 5",
    invoke_without_command=True,
    no_args_is_help=False,
)
TargetFilter = Annotated[
    list[str] | None,
    typer.Option(
        "--target", "-t", metavar="TARGET", help="Only the runs of this target URL (repeatable)."
    ),
]


@history_app.callback()
def history(
    ctx: typer.Context,
    target: TargetFilter = None,
    only: Annotated[
        list[str] | None,
        typer.Option(
            "--only",
            metavar="CHECK",
            help="Show this check's status and figures per run (repeatable).",
        ),
    ] = None,
    limit: Annotated[int, typer.Option(metavar="N", help="How many recent runs.")] = 20,
    as_json: JsonFlag = False,
    history_file: HistoryFile = None,
) -> None:
    """Recent verify runs, newest first.

    \b
    Example: envkit history --limit 5"""
    if ctx.invoked_subcommand is not None:
        return
    from envkit.commands import history as command

    request = command.HistoryRequest(
        history_file=history_file,
        targets=tuple(target or ()),
        checks=tuple(only or ()),
        limit=limit,
        json=as_json,
    )
    raise typer.Exit(command.run(request))


@history_app.command("diff", short_help="What changed between two runs.")
def diff(
    runs: Annotated[
        list[int] | None,
        typer.Argument(metavar="RUN_A RUN_B", help="Two run ids (default: last pass, latest)."),
    ] = None,
    target: TargetFilter = None,
    as_json: JsonFlag = False,
    history_file: HistoryFile = None,
) -> None:
    """What changed between two runs: versions, image, GPU, checks that flipped, figures moved.

    \b
    Example: envkit history diff 12 15"""
    from envkit.commands import history_diff as command

    request = command.HistoryDiffRequest(
        history_file=history_file, runs=tuple(runs or ()), targets=tuple(target or ()), json=as_json
    )
    raise typer.Exit(command.run(request))


@history_app.command("export", short_help="Every run as JSON lines.")
def export(
    out: Annotated[Path, typer.Argument(metavar="FILE", help="JSON-lines file to write.")],
    history_file: HistoryFile = None,
) -> None:
    """Write every recorded run as one JSON line each (for `envkit history import` elsewhere).

    \b
    Example: envkit history export runs.jsonl"""
    from envkit.commands import history_export as command

    raise typer.Exit(command.run(command.HistoryExportRequest(history_file=history_file, out=out)))


@history_app.command("import", short_help="Merge another machine's runs.")
def import_(
    source: Annotated[
        Path, typer.Argument(metavar="FILE", help="A file made by `envkit history export`.")
    ],
    history_file: HistoryFile = None,
) -> None:
    """Merge an export from another machine (runs already here are skipped).

    \b
    Example: envkit history import runs.jsonl"""
    from envkit.commands import history_import as command

    request = command.HistoryImportRequest(history_file=history_file, source=source)
    raise typer.Exit(command.run(request))
