"""Cold-process cost of `envkit --help` and `envkit render`, side by side with `python -c pass`.

Runs are interleaved (A B C A B C ...) so machine noise hits all three alike; the figures are
medians. Also records which heavy modules the render path imports (it must import none).

    python benchmarks/bench_cli.py [--runs 21] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "examples" / "pytorch-2-tuna"


def _time(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="envkit-bench-"))
    # A copy: render also writes .devcontainer/ beside envkit.yaml, never into the checkout.
    shutil.copytree(EXAMPLE, work / "example")
    out = work / "out"
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "envkit --help": [sys.executable, "-m", "envkit", "--help"],
        "envkit render": [
            sys.executable,
            "-m",
            "envkit",
            "render",
            "-c",
            str(work / "example" / "envkit.yaml"),
            "-o",
            str(out),
        ],
    }
    # envkit's bytecode, as `pip install` leaves it: a process started with
    # PYTHONDONTWRITEBYTECODE=1 (set on some CI machines, this one included) over a checkout with
    # no __pycache__ would otherwise compile envkit's ~80 modules from source on every run.
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "envkit")], check=True)
    for cmd in commands.values():  # warm the OS file cache once
        _time(cmd)
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(args.runs):
        for name, cmd in commands.items():
            samples[name].append(_time(cmd))
    base = statistics.median(samples["python -c pass"])
    results = {}
    for name, values in samples.items():
        median = statistics.median(values)
        results[name] = {
            "median_s": round(median, 4),
            "ratio_to_python": round(median / base, 2),
            "excess_over_python_s": round(median - base, 4),
        }
    probe = (
        "import sys, runpy; sys.argv=['envkit','render','-c',sys.argv[1],'-o',sys.argv[2]]\n"
        "try:\n runpy.run_module('envkit', run_name='__main__')\nexcept SystemExit: pass\n"
        "print('HEAVY=' + ','.join(m for m in ('docker','paramiko','torch') if m in sys.modules))"
    )
    probe_out = subprocess.run(
        [sys.executable, "-c", probe, str(EXAMPLE), str(out)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    heavy = [ln.removeprefix("HEAVY=") for ln in probe_out.splitlines() if ln.startswith("HEAVY=")]
    report = {
        "runs": args.runs,
        "python": sys.version.split()[0],
        "results": results,
        "heavy_modules_on_render_path": heavy[0] if heavy and heavy[0] else "none",
    }
    print(f"{'command':<16} {'median':>8} {'x python':>9} {'excess':>8}")
    for name, row in results.items():
        print(
            f"{name:<16} {row['median_s']:>7.3f}s {row['ratio_to_python']:>8.2f}x "
            f"{row['excess_over_python_s'] * 1000:>6.0f}ms"
        )
    print(f"heavy modules imported by render: {report['heavy_modules_on_render_path']}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
