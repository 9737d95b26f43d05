"""`envkit history`: the recorded verify runs, what changed between two of them, and export or
import of the whole history (JSON lines) so a team can merge runs from several machines."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from envkit.checks.core.contract import STATUSES
from envkit.checks.core.text import finite, for_terminal
from envkit.errors import EXIT_OK, EnvkitError
from envkit.history.compare import RunDiff, diff_runs, last_pass_and_latest
from envkit.history.store import History, Run, default_path

MAX_LIMIT = 100_000
MAX_RUN_ID = 2**62  # SQLite's integers are 64-bit signed


def open_history(path: Path | None) -> History:
    return History(path or default_path())


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


def history_list(
    path: Path | None, target: str | None, check: str | None, limit: int, as_json: bool
) -> int:
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


def _pick(history: History, ids: list[int], target: str | None) -> tuple[Run, Run]:
    if not ids:
        pair = last_pass_and_latest(history, target)
        if pair is None:
            raise EnvkitError(
                "fewer than two recorded runs to compare", "run `envkit verify` again first"
            )
        return pair
    if len(ids) != 2:
        raise EnvkitError("history diff takes two run ids or none", "e.g. envkit history diff 3 7")
    for run_id in ids:
        if not 1 <= run_id <= MAX_RUN_ID:
            raise EnvkitError(f"run {run_id} cannot exist", "name run ids from `envkit history`")
    runs = [history.run(i) for i in ids]
    missing = [str(i) for i, run in zip(ids, runs, strict=True) if run is None]
    if missing:
        raise EnvkitError(f"no run {', '.join(missing)} in history", "see `envkit history`")
    return runs[0], runs[1]  # type: ignore[return-value]


def history_diff(path: Path | None, ids: list[int], target: str | None, as_json: bool) -> int:
    history = open_history(path)
    older, newer = _pick(history, ids, target)
    found = diff_runs(history, older, newer)
    if as_json:
        sys.stdout.write(json.dumps(finite(_diff_json(found)), indent=2) + "\n")
        return EXIT_OK
    out = say
    out(f"run {older.id} ({older.state}, {older.started_at}) -> run {newer.id} ")
    out(f"({newer.state}, {newer.started_at}) on {newer.target}\n")
    for what, before, after in found.changed:
        out(f"changed  {what}: {before} -> {after}\n")
    for check, before, after in found.flipped:
        out(f"flipped  {check}: {before} -> {after}\n")
    for what, before, after, unit in found.moved:
        change = (after - before) / before
        out(f"moved    {what}: {before:.4g} -> {after:.4g} {unit} ({change:+.0%})\n")
    for what, before, after in found.rose:
        out(f"rose     {what}: {before:g} -> {after:g}{_news(what, before)}\n")
    if not (found.changed or found.flipped or found.moved or found.rose):
        out("nothing changed beyond the noise\n")
    return EXIT_OK


def _news(what: str, before: float) -> str:
    """What a counter's rise means, where it has a name."""
    if what.startswith("gpu.xid xid_"):
        code = what.rsplit("_", 1)[1]
        return f" (a new XID {code})" if not before else f" (XID {code} again)"
    if "ecc_aggregate_corrected" in what:
        return " (correctable ECC errors rising)"
    return ""


def _diff_json(found: RunDiff) -> dict[str, Any]:
    return {
        "older": found.older.id,
        "newer": found.newer.id,
        "changed": [{"what": w, "before": b, "after": a} for w, b, a in found.changed],
        "flipped": [{"check": c, "before": b, "after": a} for c, b, a in found.flipped],
        "moved": [{"figure": w, "before": b, "after": a, "unit": u} for w, b, a, u in found.moved],
        "rose": [{"counter": w, "before": b, "after": a} for w, b, a in found.rose],
    }


def history_export(path: Path | None, out: Path) -> int:
    from envkit.history.exchange import write_export

    count = write_export(open_history(path), out)
    say(f"exported {count} runs to {out}\n")
    return EXIT_OK


def history_import(path: Path | None, source: Path) -> int:
    from envkit.history.exchange import import_runs

    added, skipped = import_runs(open_history(path), source)
    say(f"imported {added} runs ({skipped} already here)\n")
    return EXIT_OK
