"""`envkit render` on large and hostile configs, side by side with the small example: wall time
and peak memory (the child's own max RSS, from wait4) of a cold `python -m envkit render`.

Cases: the example (baseline); a 1 MB config (runtime.env values); 100,000 apt packages; a
config just under the 4 MiB cap; the 9-level alias bomb (refused); 5,000 levels of nesting
(refused). Runs are interleaved so noise hits every case alike; figures are medians.

    python benchmarks/bench_hostile.py [--runs 5] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
KEY = (REPO / "examples" / "seed-pytorch-1.11" / "keys" / "lead.pub").read_text().strip()
EXAMPLE = REPO / "examples" / "pytorch-2-tuna" / "envkit.yaml"
HEAD = f"name: big\nssh:\n  authorized_keys: ['{KEY}']\n"


def _alias_bomb() -> str:
    rows = "".join(
        f"  {c}: &{c} [{', '.join(['*' + p] * 9)}]\n"
        for p, c in zip("abcdefgh", "bcdefghi", strict=True)
    )
    return "name: a\nx-bomb:\n  a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + rows


def cases() -> dict[str, tuple[str, int]]:
    """name -> (config text, expected exit code)."""
    env = "".join(f"    VAR_{i}: {'v' * 90}\n" for i in range(10_000))
    packages = "".join(f"    - pkg{i}\n" for i in range(100_000))
    near_cap = "".join(f"# {'x' * 76}\n" for i in range(52_000))
    return {
        "example": (EXAMPLE.read_text(), 0),
        "1mb-env": (HEAD + "runtime:\n  env:\n" + env, 0),
        "100k-apt-packages": (HEAD + "packages:\n  apt:\n" + packages, 0),
        "4mib-cap": (HEAD + near_cap, 0),
        "alias-bomb": (_alias_bomb(), 2),
        "nesting-5000": ("name: a\nx: " + "[" * 5000 + "]" * 5000 + "\n", 2),
    }


def run_once(config: Path, out: Path) -> tuple[float, int, int]:
    """(seconds, peak RSS in bytes, exit code) of one cold render."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "envkit", "render", "-c", str(config), "-o", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    return elapsed, usage.ru_maxrss * 1024, os.waitstatus_to_exitcode(status)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="envkit-bench-hostile-"))
    configs = {}
    for name, (text, code) in cases().items():
        folder = work / name
        # a copy of the example's folder: its key files are relative to envkit.yaml
        shutil.copytree(EXAMPLE.parent, folder)
        (folder / "envkit.yaml").write_text(text)
        configs[name] = (folder / "envkit.yaml", code, len(text.encode()))
    times: dict[str, list[float]] = {name: [] for name in configs}
    peaks: dict[str, list[int]] = {name: [] for name in configs}
    for _ in range(args.runs):
        for name, (config, code, _) in configs.items():
            elapsed, peak, got = run_once(config, config.parent / "out")
            if got != code:
                raise SystemExit(f"{name}: exit {got}, expected {code}")
            times[name].append(elapsed)
            peaks[name].append(peak)
    base = statistics.median(times["example"])
    rows = {}
    print(f"{'case':<20} {'bytes':>9} {'exit':>4} {'median s':>9} {'x example':>9} {'peak MB':>8}")
    for name, (_, code, size) in configs.items():
        median = statistics.median(times[name])
        peak = max(peaks[name]) / 1e6
        rows[name] = {"bytes": size, "exit": code, "median_s": median, "ratio": median / base,
                      "peak_mb": peak}  # fmt: skip
        print(f"{name:<20} {size:>9} {code:>4} {median:>9.2f} {median / base:>9.2f} {peak:>8.0f}")
    if args.json:
        args.json.write_text(json.dumps({"runs": args.runs, "cases": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
