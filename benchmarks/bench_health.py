"""`envkit health` on an 8-GPU node beside a 2-GPU one, through the NVML stand-in (no GPU here):
the health program Slurm runs (`python -m envkit.checks health`, the code the bundle ships),
each run a cold process, interleaved, 5 runs each. Slurm kills a HealthCheckProgram at 60 s.

    python benchmarks/bench_health.py [--runs 5] [--json benchmarks/health.json]
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

from tests.gpu_standin import build_standin, env_for  # noqa: E402

SCENARIOS = {"2 x H100 SXM": "h100-sxm", "8 x B200": "b200-x8"}
PYTHON = "/usr/bin/python3"  # Debian's, with torch: what a node's health program runs


def run_once(library: Path, scenario: Path, state: Path) -> tuple[float, str]:
    env = dict(os.environ, **env_for(library, scenario), ENVKIT_NODE_STATE=str(state))
    env["PYTHONPATH"] = str(REPO)
    started = time.monotonic()
    done = subprocess.run(
        [PYTHON, "-m", "envkit.checks", "health"], cwd=REPO, env=env, capture_output=True,
        text=True, timeout=120, check=False,
    )  # fmt: skip
    took = time.monotonic() - started
    if done.returncode != 0:
        raise SystemExit(f"health failed on {scenario.name}: {done.stdout}{done.stderr}")
    return took, done.stdout.strip()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    library = build_standin()
    times: dict[str, list[float]] = {label: [] for label in SCENARIOS}
    with tempfile.TemporaryDirectory(prefix="envkit-bench-health-") as folder:
        for _ in range(args.runs):
            for label, name in SCENARIOS.items():
                scenario = REPO / "tests" / "data" / "nvml" / f"{name}.json"
                state = Path(folder) / f"{name}-state.json"
                took, _ = run_once(library, scenario, state)
                times[label].append(took)
    result = {
        label: {"median_s": statistics.median(t), "max_s": max(t), "runs": t}
        for label, t in times.items()
    }
    two, eight = (result[label]["median_s"] for label in SCENARIOS)
    result["ratio_8_to_2"] = eight / two
    result["cpus"] = os.cpu_count()
    for label in SCENARIOS:
        row = result[label]
        print(f"{label:14} median {row['median_s']:.2f} s, max {row['max_s']:.2f} s")
    print(f"8 GPUs / 2 GPUs: {result['ratio_8_to_2']:.2f}x; Slurm's limit: 60 s")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
