"""`envkit compat refresh`: rebuild the table's release rows from the published sources and
show the diff; write it only when asked."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from importlib import resources
from pathlib import Path

import typer

from envkit.catalog.refresh.fetch import Fetcher, LiveFetcher, RecordingFetcher, ReplayFetcher
from envkit.catalog.refresh.run import refresh
from envkit.errors import EnvkitError


def _previous(table: Path | None) -> tuple[str, Path | None]:
    if table is None:
        packaged = resources.files("envkit.catalog").joinpath("compat.yaml")
        return packaged.read_text(encoding="utf-8"), None
    if not table.is_file():
        raise EnvkitError(f"--table: {table} is not a file", "name the compat.yaml to refresh")
    return table.read_text(encoding="utf-8"), table


def _fetcher(replay: Path | None, record: Path | None) -> tuple[Fetcher, str]:
    if replay is not None and record is not None:
        raise EnvkitError("--replay and --record exclude each other", "pass one of them")
    if replay is not None:
        if not (replay / "recording.json").is_file():
            raise EnvkitError(
                f"--replay: {replay} holds no recording.json",
                "name a folder made by `envkit compat refresh --record`",
            )
        player = ReplayFetcher(replay)
        return player, player.recorded
    today = date.today().isoformat()
    if record is not None:
        if record.exists() and any(record.iterdir()):
            raise EnvkitError(f"--record: {record} is not empty", "name a new or empty folder")
        record.mkdir(parents=True, exist_ok=True)
        return RecordingFetcher(LiveFetcher(), record), today
    return LiveFetcher(), today


@dataclass(frozen=True, kw_only=True)
class CompatRefreshRequest:
    table: Path | None = None  # the compat.yaml to refresh (default: the installed one)
    write: bool = False
    replay: Path | None = None  # read the sources from this recording
    record: Path | None = None  # keep every answer in this new folder


def run(request: CompatRefreshRequest) -> int:
    table, write, replay, record = request.table, request.write, request.replay, request.record
    previous_text, path = _previous(table)
    if write and path is None:
        raise EnvkitError(
            "--write needs --table: the installed package's copy is not edited in place",
            "pass --table envkit/catalog/compat.yaml from a checkout",
        )
    fetcher, today = _fetcher(replay, record)
    result = refresh(fetcher, previous_text, today)
    if isinstance(fetcher, RecordingFetcher):
        fetcher.save("recorded by `envkit compat refresh --record`")
    for problem in result.problems:
        typer.echo(f"note: {problem}", err=True)
    for source, when in result.sources.items():
        typer.echo(f"{source:>12}: last read {when}", err=True)
    if not result.diff:
        typer.echo("the table is current: no change", err=True)
        return 0
    typer.echo(result.diff, nl=False)
    if write and path is not None:
        path.write_text(result.text, encoding="utf-8")
        typer.echo(f"wrote {path}", err=True)
    return 0
