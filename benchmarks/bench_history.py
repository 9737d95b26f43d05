"""History's cost and its judgement, on this machine's CPU torch (`verify --local`):

1. Recording overhead, side by side: `envkit verify` with and without `--no-history`,
   interleaved, plus the in-process time of recording one report (what the difference is).
2. False alarms: N healthy reruns judged with `--baseline auto` after 3 seed runs.
3. Detection: a planted 2x slowdown of the timed matmul (tests/plants: slow_matmul).

    python benchmarks/bench_history.py [--runs 10] [--reruns 20] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
CHECKS = ["--only", "bench.cpu_matmul", "--only", "bench.cpu_memcpy"]


def verify(db: Path, *extra: str, plant: str | None = None) -> tuple[float, int, str]:
    env = dict(os.environ, ENVKIT_HISTORY=str(db), PYTHONPATH=str(REPO))
    if plant:
        env["PYTHONPATH"] = f"{REPO / 'tests' / 'plants'}{os.pathsep}{REPO}"
        env["ENVKIT_TEST_PLANT"] = plant
    argv = [sys.executable, "-m", "envkit", "verify", "--local", "--python", "/usr/bin/python3"]
    start = time.perf_counter()
    done = subprocess.run(
        [*argv, "-q", *CHECKS, *extra], env=env, capture_output=True, text=True, check=False
    )
    return time.perf_counter() - start, done.returncode, done.stdout


def record_cost(db: Path, runs: int) -> float:
    """Median seconds to open the history and record one report, in process."""
    from envkit.history.record import remember

    report = {
        "started_at": "2026-11-22T00:00:00Z", "target": "local://", "duration_s": 1.0,
        "environment": {"torch": "x"}, "summary": {"pass": 2, "fail": 0, "skip": 0, "error": 0},
        "checks": [{"id": f"c{i}", "status": "pass", "duration_s": 0.1, "message": "m",
                    "metrics": [{"name": "m", "value": 1.0, "unit": "GB/s"}]} for i in range(40)],
    }  # fmt: skip
    times = []
    for n in range(runs):
        start = time.perf_counter()
        remember([report], f"bench-{n}", db, "auto")
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--reruns", type=int, default=20)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="envkit-bench-history-"))
    with_db, judged = work / "with.sqlite3", work / "judged.sqlite3"
    on, off = [], []
    for _ in range(args.runs):
        on.append(verify(with_db)[0])
        off.append(verify(with_db, "--no-history")[0])
    in_process = record_cost(work / "inproc.sqlite3", 50)
    for _ in range(3):
        verify(judged)
    alarms, flagged = 0, []
    for _ in range(args.reruns):
        _, code, out = verify(judged, "--baseline", "auto")
        alarms += code != 0
        flagged += [line for line in out.splitlines() if line.startswith("regression")]
    for line in flagged:  # what a false alarm was, to tell noise from a real change
        print(line)
    _, slow_code, slow_out = verify(judged, "--baseline", "auto", plant="slow_matmul")
    result = {
        "verify_with_history_s": statistics.median(on),
        "verify_no_history_s": statistics.median(off),
        "ratio": statistics.median(on) / statistics.median(off),
        "record_in_process_ms": in_process * 1000,
        "healthy_reruns": args.reruns,
        "false_alarms": alarms,
        "false_alarm_lines": flagged,
        "planted_2x_flagged": slow_code == 1 and "regression on" in slow_out,
    }
    for key, value in result.items():
        print(f"{key:<24} {value:.3f}" if isinstance(value, float) else f"{key:<24} {value}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
