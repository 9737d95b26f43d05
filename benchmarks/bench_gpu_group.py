"""The gpu group's added time: the checks runner on a healthy NVML stand-in scenario (two H100
SXM GPUs, tests/data/nvml/h100-sxm.json) with and without the gpu group, side by side
(interleaved runs, medians), the same interpreter and the same other checks. No GPU is needed:
the stand-in (tests/nvml_standin) answers NVML's calls; what is timed is envkit's own cost
(NVML reads, the watch, the after-phase worker), which a real GPU's answers do not change much.

    python benchmarks/bench_gpu_group.py [--python /usr/bin/python3] [--runs 7] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.gpu_standin import SCENARIOS, build_standin  # noqa: E402 - the repo on the path first

BASE = ["cuda", "tensor", "autograd", "system.shm", "system.dataloader_workers"]


def _time(python: str, only: list[str], env: dict[str, str]) -> float:
    config = json.dumps({"only": only, "bench": False})
    start = time.perf_counter()
    done = subprocess.run(
        [python, "-m", "envkit.checks", "run", "--config", config],
        check=False, capture_output=True, cwd=REPO, env=env,
    )  # fmt: skip
    elapsed = time.perf_counter() - start
    report = json.loads(done.stdout)
    assert not report["summary"]["fail"] and not report["summary"]["error"], report["summary"]
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--python", default="/usr/bin/python3", help="an interpreter with torch")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    env = dict(
        os.environ,
        LD_LIBRARY_PATH=str(build_standin()),
        NVML_STANDIN_SCENARIO=str(SCENARIOS / "h100-sxm.json"),
    )
    cases = {"suite without gpu": BASE, "suite with gpu": [*BASE, "gpu"], "gpu alone": ["gpu"]}
    for only in cases.values():
        _time(args.python, only, env)  # warm caches
    samples: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(args.runs):
        for name, only in cases.items():
            samples[name].append(_time(args.python, only, env))
    medians = {name: statistics.median(values) for name, values in samples.items()}
    base = medians["suite without gpu"]
    print("| run | median | x suite without gpu |\n| --- | --- | --- |")
    for name, value in medians.items():
        print(f"| {name} | {value:.2f} s | {value / base:.2f}x |")
    if args.json:
        args.json.write_text(
            json.dumps({"runs": args.runs, "samples": samples, "medians": medians}, indent=2) + "\n"
        )


if __name__ == "__main__":
    main()
