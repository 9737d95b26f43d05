"""`envkit history`: the recorded verify runs, newest first (its subcommands: history_diff,
history_export, history_import)."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envkit.checks.core.contract import STATUSES
from envkit.checks.core.text import finite, for_terminal
from envkit.errors import EXIT_OK, EnvkitError
from envkit.history.store import History, Run, open_history

MAX_LIMIT = 100_000


@dataclass(frozen=True, kw_only=True)
class HistoryRequest:
    history_file: Path | None = None
    target: str | None = None
    check: str | None = None
    limit: int = 20
    json: bool = False


def say(text: str) -> None:
    """To the terminal, with what a recorded string might carry (escape sequences) escaped."""
    sys.stdout.write(for_terminal(text))


def _row(run: Run, check: str | None, history: History) -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": run.id,
        "started_at": run.started_at,
        "target": run.target,
        "state": run.state,
        "torch": run.environment.get("torch"),
        "gpu": f"{run.gpu_count} x {run.gpu_model}" if run.gpu_model else "none",
        "image": (run.image_id or "")[7:19] or "-",
        **{k: run.summary.get(k, 0) for k in STATUSES},
    }
    if check:
        row["check"] = history.checks(run.id).get(check, "absent")
        row["figures"] = {
            name: round(value, 3)
            for (check_id, name), (value, _) in history.metrics(run.id).items()
            if check_id == check
        }
    return row


def run(request: HistoryRequest) -> int:
    target, check, limit, as_json = request.target, request.check, request.limit, request.json
    path = request.history_file
    if not 1 <= limit <= MAX_LIMIT:
        raise EnvkitError(f"--limit {limit} is out of range", f"choose 1 to {MAX_LIMIT}")
    history = open_history(path)
    rows = [_row(run, check, history) for run in history.runs(target, limit)]
    if as_json:
        sys.stdout.write(json.dumps(finite(rows), indent=2) + "\n")
        return EXIT_OK
    if not rows:
        say(f"no runs recorded in {history.path}\n")
        return EXIT_OK
    columns = [c for c in rows[0] if c != "figures"]
    cells = [{c: for_terminal(row[c]) for c in columns} for row in rows]
    widths = {c: max(len(c), *(len(cell[c]) for cell in cells)) for c in columns}
    sys.stdout.write("  ".join(c.ljust(widths[c]) for c in columns) + "\n")
    for row, cell in zip(rows, cells, strict=True):
        line = "  ".join(cell[c].ljust(widths[c]) for c in columns)
        figures = row.get("figures")
        say(line + (f"  {figures}" if figures else "") + "\n")
    return EXIT_OK
