"""`envkit history export FILE`: every recorded run as one JSON line, for another machine."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from envkit.checks.core.text import for_terminal
from envkit.commands.history import warn_skipped
from envkit.errors import EXIT_OK
from envkit.history.exchange import write_export
from envkit.history.store import open_history


@dataclass(frozen=True, kw_only=True)
class HistoryExportRequest:
    history_file: Path | None = None
    out: Path


def run(request: HistoryExportRequest) -> int:
    history = open_history(request.history_file)
    count = write_export(history, request.out)
    warn_skipped(history)
    print(for_terminal(f"exported {count} runs to {request.out}"))
    return EXIT_OK
