"""`envkit history import FILE`: merge another machine's export into this history."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from envkit.errors import EXIT_OK
from envkit.history.exchange import import_runs
from envkit.history.store import open_history


@dataclass(frozen=True, kw_only=True)
class HistoryImportRequest:
    history_file: Path | None = None
    source: Path


def run(request: HistoryImportRequest) -> int:
    added, skipped = import_runs(open_history(request.history_file), request.source)
    print(f"imported {added} runs ({skipped} already here)")
    return EXIT_OK
