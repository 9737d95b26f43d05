"""The suite run end to end inside a target: choose the checks, run them isolated (core/) while
the GPUs are watched (programs/watch.py), judge the "after" checks from what the watch saw, add
a team's own pytest checks, and assemble the report."""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Optional

from .. import SCHEMA_VERSION
from ..core.contract import DEFAULT_USER_CHECKS_TIMEOUT_S, RunnerConfig, TargetReport
from ..core.session import run_checks, summarize
from ..suite import MODULES, chosen, topology
from .userchecks import run_user_checks
from .watch import Watch

WATCHED_GROUPS = ("gpu", "stress")  # a run with these checks is watched from start to end


def run_suite(config: RunnerConfig, python: Optional[str] = None) -> TargetReport:
    interpreter = python or sys.executable
    specs = chosen(
        list(config.get("only") or []),
        list(config.get("skip") or []),
        bool(config.get("bench", True)),
        stress=bool(config.get("stress_s")),
    )
    started = time.time()
    started_at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started))
    in_turn = [s for s in specs if s.phase != "after"]
    after = [s for s in specs if s.phase == "after"]
    watch = Watch.start() if any(s.group in WATCHED_GROUPS for s in specs) else None
    try:
        mark = watch.mark if isinstance(watch, Watch) else None
        environment, results = run_checks(interpreter, config, in_turn, MODULES, on_start=mark)
    finally:
        record = watch.stop() if isinstance(watch, Watch) else watch
    if after:
        with tempfile.TemporaryDirectory(prefix="envkit-watch-") as folder:
            path = os.path.join(folder, "watch.json")
            with open(path, "w") as handle:
                json.dump(record or {"available": False, "why": "no GPU check ran"}, handle)
            later: RunnerConfig = {**config, "gpu_watch": path}
            environment, more = run_checks(interpreter, later, after, MODULES, environment)
            results += more
    if isinstance(record, dict) and record.get("available"):
        # The node remembers where the kernel log was read to, its healthy topology and a
        # burn-in that may return it to service.
        note = topology.remember(record, results, started_at)
        environment = dict(
            environment, node_state=note or (record.get("node_state") or {}).get("path")
        )
    if user_checks := config.get("user_checks_dir"):
        timeout_s = float(config.get("user_checks_timeout_s", DEFAULT_USER_CHECKS_TIMEOUT_S))
        results += run_user_checks(interpreter, user_checks, timeout_s)
    return {
        "schema_version": SCHEMA_VERSION,
        "target": config.get("target", "local"),
        "started_at": started_at,
        "duration_s": round(time.time() - started, 3),
        "environment": environment,
        "summary": summarize(results),
        "checks": results,
    }


def write_json(document: Any, out: Optional[str], indent: int = 2, sort: bool = False) -> None:
    """To the file `out`, or to stdout."""
    text = json.dumps(document, indent=indent, sort_keys=sort) + "\n"
    if out:
        Path(out).write_text(text)
    else:
        sys.stdout.write(text)
