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
    targets: tuple[str, ...] = ()  # only these targets' runs
    checks: tuple[str, ...] = ()  # show these checks' status and figures
    limit: int = 20
    json: bool = False


def warn_skipped(history: History) -> None:
    """Runs read around (a row edited by hand, damaged JSON): said once, on stderr."""
    if history.skipped:
        sys.stderr.write(for_terminal(f"warning: {history.path}: {history.read_around()}\n"))


def say(text: str) -> None:
    """To the terminal, with what a recorded string might carry (escape sequences) escaped."""
    sys.stdout.write(for_terminal(text))


def _row(run: Run, checks: tuple[str, ...], history: History) -> dict[str, Any]:
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
    if not checks:
        return row
    statuses, metrics = history.checks(run.id), history.metrics(run.id)
    figures = {
        check: {
            name: round(value, 3)
            for (check_id, name), (value, _) in metrics.items()
            if check_id == check
        }
        for check in checks
    }
    if len(checks) == 1:  # one check: its status as a column, its figures beside the row
        row["check"] = statuses.get(checks[0], "absent")
        row["figures"] = figures[checks[0]]
    else:
        row["checks"] = {check: statuses.get(check, "absent") for check in checks}
        row["figures"] = figures
    return row


def run(request: HistoryRequest) -> int:
    limit, as_json, path = request.limit, request.json, request.history_file
    if not 1 <= limit <= MAX_LIMIT:
        raise EnvkitError(f"--limit {limit} is out of range", f"choose 1 to {MAX_LIMIT}")
    history = open_history(path)
    rows = [_row(run, request.checks, history) for run in history.runs(request.targets, limit)]
    warn_skipped(history)
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
