"""`envkit history diff [A B]`: what changed between two recorded runs (default: the last passing
one and the latest): versions, image, GPU, checks that flipped, figures that moved."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envkit.checks.core.text import finite
from envkit.commands.history import say, warn_skipped
from envkit.errors import EXIT_OK, EnvkitError
from envkit.history.compare import RunDiff, diff_runs, last_pass_and_latest
from envkit.history.store import History, Run, open_history

MAX_RUN_ID = 2**62  # SQLite's integers are 64-bit signed


@dataclass(frozen=True, kw_only=True)
class HistoryDiffRequest:
    history_file: Path | None = None
    runs: tuple[int, ...] = ()  # two run ids, or none for the default pair
    targets: tuple[str, ...] = ()  # for the default pair: the latest of these targets' runs
    json: bool = False


def _pick(history: History, ids: list[int], target: tuple[str, ...]) -> tuple[Run, Run]:
    if not ids:
        if (pair := last_pass_and_latest(history, target)) is None:
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
    if missing := [str(i) for i, run in zip(ids, runs, strict=True) if run is None]:
        raise EnvkitError(
            f"no run {', '.join(missing)} in history file {history.path}", "see `envkit history`"
        )
    return runs[0], runs[1]  # type: ignore[return-value]


def run(request: HistoryDiffRequest) -> int:
    history = open_history(request.history_file)
    older, newer = _pick(history, list(request.runs), request.targets)
    found = diff_runs(history, older, newer)
    warn_skipped(history)
    if request.json:
        sys.stdout.write(json.dumps(finite(_diff_json(found)), indent=2) + "\n")
        return EXIT_OK
    say(f"run {older.id} ({older.state}, {older.started_at}) -> run {newer.id} ")
    say(f"({newer.state}, {newer.started_at}) on {newer.target}\n")
    for what, before, after in found.changed:
        say(f"changed  {what}: {before} -> {after}\n")
    for check, before, after in found.flipped:
        say(f"flipped  {check}: {before} -> {after}\n")
    for what, before, after, unit in found.moved:
        change = (after - before) / before
        say(f"moved    {what}: {before:.4g} -> {after:.4g} {unit} ({change:+.0%})\n")
    for what, before, after in found.rose:
        say(f"rose     {what}: {before:g} -> {after:g}{_news(what, before)}\n")
    if not (found.changed or found.flipped or found.moved or found.rose):
        say("nothing changed beyond the noise\n")
    return EXIT_OK


def _news(what: str, before: float) -> str:
    """What a counter's rise means, where it has a name."""
    if what.startswith("gpu.xid xid_"):
        code = what.rsplit("_", 1)[1]
        return f" (a new XID {code})" if not before else f" (XID {code} again)"
    return " (correctable ECC errors rising)" if "ecc_aggregate_corrected" in what else ""


def _diff_json(found: RunDiff) -> dict[str, Any]:
    return {
        "older": found.older.id,
        "newer": found.newer.id,
        "changed": [{"what": w, "before": b, "after": a} for w, b, a in found.changed],
        "flipped": [{"check": c, "before": b, "after": a} for c, b, a in found.flipped],
        "moved": [{"figure": w, "before": b, "after": a, "unit": u} for w, b, a, u in found.moved],
        "rose": [{"counter": w, "before": b, "after": a} for w, b, a in found.rose],
    }
