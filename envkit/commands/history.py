"""`envkit history`: the recorded verify runs, what changed between two of them, and export or
import of the whole history (JSON lines) so a team can merge runs from several machines."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from envkit.errors import EXIT_OK, EnvkitError
from envkit.history.compare import RunDiff, diff_runs, last_pass_and_latest
from envkit.history.store import History, Run, default_path, export_lines, import_lines


def open_history(path: Path | None) -> History:
    return History(path or default_path())


def _row(run: Run, check: str | None, history: History) -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": run.id,
        "started_at": run.started_at,
        "target": run.target,
        "state": run.state,
        "torch": run.environment.get("torch"),
        "gpu": f"{run.gpu_count} x {run.gpu_model}" if run.gpu_model else "none",
        "image": (run.image_id or "")[7:19] or "-",
        **{k: run.summary.get(k, 0) for k in ("pass", "fail", "skip", "error")},
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
    history = open_history(path)
    rows = [_row(run, check, history) for run in history.runs(target, limit)]
    if as_json:
        sys.stdout.write(json.dumps(rows, indent=2) + "\n")
        return EXIT_OK
    if not rows:
        sys.stdout.write(f"no runs recorded in {history.path}\n")
        return EXIT_OK
    columns = [c for c in rows[0] if c != "figures"]
    widths = {c: max(len(c), *(len(str(r[c])) for r in rows)) for c in columns}
    sys.stdout.write("  ".join(c.ljust(widths[c]) for c in columns) + "\n")
    for row in rows:
        line = "  ".join(str(row[c]).ljust(widths[c]) for c in columns)
        figures = row.get("figures")
        sys.stdout.write(line + (f"  {figures}" if figures else "") + "\n")
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
        sys.stdout.write(json.dumps(_diff_json(found), indent=2) + "\n")
        return EXIT_OK
    out = sys.stdout.write
    out(f"run {older.id} ({older.state}, {older.started_at}) -> run {newer.id} ")
    out(f"({newer.state}, {newer.started_at}) on {newer.target}\n")
    for what, before, after in found.changed:
        out(f"changed  {what}: {before} -> {after}\n")
    for check, before, after in found.flipped:
        out(f"flipped  {check}: {before} -> {after}\n")
    for what, before, after, unit in found.moved:
        change = (after - before) / before
        out(f"moved    {what}: {before:.4g} -> {after:.4g} {unit} ({change:+.0%})\n")
    if not (found.changed or found.flipped or found.moved):
        out("nothing changed beyond the noise\n")
    return EXIT_OK


def _diff_json(found: RunDiff) -> dict[str, Any]:
    return {
        "older": found.older.id,
        "newer": found.newer.id,
        "changed": [{"what": w, "before": b, "after": a} for w, b, a in found.changed],
        "flipped": [{"check": c, "before": b, "after": a} for c, b, a in found.flipped],
        "moved": [{"figure": w, "before": b, "after": a, "unit": u} for w, b, a, u in found.moved],
    }


def history_export(path: Path | None, out: Path) -> int:
    lines = export_lines(open_history(path))
    out.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    sys.stdout.write(f"exported {len(lines)} runs to {out}\n")
    return EXIT_OK


def history_import(path: Path | None, source: Path) -> int:
    try:
        lines = source.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise EnvkitError(
            f"cannot read {source}: {exc}", "name a file from `history export`"
        ) from None
    added, skipped = import_lines(open_history(path), lines, str(source))
    sys.stdout.write(f"imported {added} runs ({skipped} already here)\n")
    return EXIT_OK
