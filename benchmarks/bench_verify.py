"""Wall time of the default CPU suite (`envkit verify --local`) minus `python -c "import torch"`,
measured side by side (interleaved runs, medians) with the same torch interpreter.

    python benchmarks/bench_verify.py [--python /usr/bin/python3] [--runs 7] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _time(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=REPO)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--python", default="/usr/bin/python3", help="an interpreter with torch")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    commands = {
        "import torch": [args.python, "-c", "import torch"],
        "checks runner": [
            args.python,
            "-m",
            "envkit.checks",
            "run",
            "--config",
            '{"bench": false}',
        ],
        "envkit verify --local": [
            sys.executable,
            "-m",
            "envkit",
            "verify",
            "--local",
            "--python",
            args.python,
            "--no-bench",
            "-q",
        ],
    }
    for cmd in commands.values():
        _time(cmd)  # warm caches
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(args.runs):
        for name, cmd in commands.items():
            samples[name].append(_time(cmd))
    medians = {name: statistics.median(values) for name, values in samples.items()}
    base = medians["import torch"]
    report = {
        "runs": args.runs,
        "medians_s": {k: round(v, 3) for k, v in medians.items()},
        "over_import_torch_s": {k: round(v - base, 3) for k, v in medians.items()},
    }
    for name, median in medians.items():
        print(f"{name:<24} {median:6.2f}s  (+{median - base:5.2f}s over import torch)")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
