"""What `envkit verify --slurm` adds over a bare `srun` of the checks bundle on the same nodes.

A private Slurm cluster on this machine (tests/slurm_cluster.py: munged, slurmctld, one slurmd
per node name). Interleaved runs, medians, for 1 and 2 nodes:
  1. bare srun: `srun -N K --ntasks-per-node=1 python3 bundle.zip run --config ... --out FILE`;
  2. bare sbatch: the same srun line in a batch script, submitted with sbatch, its end seen by
     polling a file every 50 ms: what any "one batch job" design pays (Slurm starts batch jobs
     on its scheduler's pass, up to batch_sched_delay = 3 s by default, not at once as srun);
  3. envkit: `envkit verify --slurm --nodes K` with the same checks (the CLI process whole:
     start-up, sbatch, the wait, reading and merging the reports, the table).
All run the same checks (`--only tensor`, no benchmarks, no cross-node step). envkit's own
cost is 3 - 2; per job and per node come from the two node counts. The cluster is Slurm's
defaults but for what a one-host test cluster needs (tests/slurm_cluster.py).

    python benchmarks/bench_slurm.py [--runs 5] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
PYTHON = "/usr/bin/python3"  # Debian's python3-torch on the nodes
ONLY = "tensor"


def _sbatched(script: Path, nodes: int, done: Path, env: dict[str, str], cwd: Path) -> float:
    done.unlink(missing_ok=True)
    start = time.perf_counter()
    subprocess.run(
        ["sbatch", "-N", str(nodes), "--ntasks-per-node=1", f"--output={cwd}/bare.out",
         str(script)],
        env=env, cwd=cwd, check=True, capture_output=True,
    )  # fmt: skip
    while not done.exists():
        time.sleep(0.05)
    return time.perf_counter() - start


def _timed(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=env, cwd=cwd, check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--json")
    args = parser.parse_args()
    from envkit.verify.bundle import build_bundle
    from tests.slurm_cluster import SlurmCluster

    work = Path(tempfile.mkdtemp(prefix="bench-slurm-"))
    # Batch jobs start on the scheduler's next pass: with Slurm's default batch_sched_delay (up
    # to 3 s) that phase, not envkit, dominates and scatters every batch figure; the benchmark
    # sets it to 0 so what is left to compare is envkit's own work.
    cluster = SlurmCluster(
        work / "cluster", ("n1", "n2"), scheduler_parameters="batch_sched_delay=0"
    ).start()
    bundle = work / "checks.zip"
    bundle.write_bytes(build_bundle())
    config = json.dumps({"only": [ONLY], "bench": False, "target": "slurm"})
    times: dict[str, list[float]] = {}
    done = work / "bare-done"
    script = work / "bare.sh"
    srun_line = [
        "srun", "--ntasks-per-node=1", PYTHON, str(bundle), "run", "--config", config,
        "--out", f"{work}/bare-%n.json",
    ]  # fmt: skip
    script.write_text(f"#!/bin/bash\n{shlex.join(srun_line)}\ntouch {shlex.quote(str(done))}\n")
    try:
        for _ in range(args.runs):
            for nodes in (1, 2):
                bare = [
                    "srun", "-N", str(nodes), "--ntasks-per-node=1", PYTHON, str(bundle), "run",
                    "--config", config, "--out", f"{work}/bare-%n.json",
                ]  # fmt: skip
                ours = [
                    sys.executable, "-m", "envkit", "verify", "--slurm", "--nodes", str(nodes),
                    "--python", PYTHON, "--only", ONLY, "--no-bench", "--no-history", "-q",
                    "--workdir", str(work / "runs"),
                ]  # fmt: skip
                times.setdefault(f"bare srun, {nodes} node(s)", []).append(
                    _timed(bare, cluster.env, work)
                )
                times.setdefault(f"bare sbatch, {nodes} node(s)", []).append(
                    _sbatched(script, nodes, done, cluster.env, work)
                )
                times.setdefault(f"envkit verify --slurm, {nodes} node(s)", []).append(
                    _timed(ours, cluster.env, work)
                )
    finally:
        cluster.stop()
    medians = {name: statistics.median(values) for name, values in times.items()}
    over = {
        n: medians[f"envkit verify --slurm, {n} node(s)"] - medians[f"bare sbatch, {n} node(s)"]
        for n in (1, 2)
    }
    batch = {
        n: medians[f"bare sbatch, {n} node(s)"] - medians[f"bare srun, {n} node(s)"] for n in (1, 2)
    }
    per_node = over[2] - over[1]
    summary = {
        "runs": args.runs,
        "medians_s": {k: round(v, 3) for k, v in medians.items()},
        "envkit_over_bare_sbatch_s": {f"{n} node(s)": round(v, 3) for n, v in over.items()},
        "slurm_batch_over_srun_s": {f"{n} node(s)": round(v, 3) for n, v in batch.items()},
        "overhead_per_job_s": round(over[1] - per_node, 3),
        "overhead_per_node_s": round(per_node, 3),
        "ratios": {
            name: round(value / medians[f"bare srun, {name.rsplit(', ', 1)[1]}"], 2)
            for name, value in medians.items()
        },
    }
    for name, value in medians.items():
        print(f"{name:<36} {value:6.2f} s")
    print(json.dumps(summary, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=2) + "\n")


if __name__ == "__main__":
    main()
