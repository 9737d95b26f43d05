"""GPU evidence: the whole checks suite, benchmarks included, on a machine whose python has CUDA
torch (no Docker, no envkit install there: the checks need only the standard library and torch).

On the GPU machine, from a checkout:
    python3 scripts/gpu_evidence.py run --out OUT
writes OUT/report.json (the suite's report: the gpu group, the benchmarks and a 60 s burn-in on
every GPU, GPUs required), OUT/fingerprint.json (the machine: GPUs, driver, VBIOS, torch, CUDA,
cuDNN, NCCL), OUT/matmul-method.json (the suite's matmul shape search beside the fixed square,
benchmarks/bench_matmul_method.py), OUT/health.txt (`health` as Slurm and node-problem-detector
read it), OUT/metrics.prom (the run as `envkit metrics` exports it) and OUT/date.txt.
Then, where envkit is installed:
    python scripts/gpu_evidence.py publish OUT
adds OUT/report.html (envkit's HTML report) and copies the four files to
docs/evidence/<date>-<gpu>/. The exit status of `run` is the suite's: 0 only when every check
passed or was skipped for a stated reason.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
EVIDENCE = REPO / "docs" / "evidence"


def run(out: Path, require_gpu: bool, stress_s: float) -> int:
    out.mkdir(parents=True, exist_ok=True)
    config = {"target": "local", "require_gpu": require_gpu, "bench": True, "stress_s": stress_s}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "envkit.checks",
            "run",
            "--config",
            json.dumps(config),
            "--out",
            str(out / "report.json"),
        ],
        cwd=REPO,
        check=False,
    )
    report = json.loads((out / "report.json").read_text())
    (out / "fingerprint.json").write_text(json.dumps(report["environment"], indent=2) + "\n")
    method = REPO / "benchmarks" / "bench_matmul_method.py"
    subprocess.run(
        [sys.executable, str(method), "--json", str(out / "matmul-method.json")],
        cwd=REPO,
        check=False,
    )
    (out / "date.txt").write_text(time.strftime("%Y-%m-%dT%H:%M:%S%z") + "\n")
    _health_and_metrics(out, report)
    counts = report["summary"]
    print(f"{counts} -> {out}")
    return done.returncode


def _health_and_metrics(out: Path, report: dict) -> None:
    """The node's verdict as Slurm and node-problem-detector read it (health.txt: each mode's
    line and exit code), and the run as `envkit metrics` exports it (metrics.prom), from a
    history store of its own: both need only the standard library and torch here."""
    lines = []
    for mode in ([], ["--npd"]):
        done = subprocess.run(
            [sys.executable, "-m", "envkit.checks", "health", *mode],
            cwd=REPO, capture_output=True, text=True, check=False,
        )  # fmt: skip
        lines.append(f"$ health {' '.join(mode)}\n{done.stdout}{done.stderr}exit {done.returncode}")
    (out / "health.txt").write_text("\n".join(lines) + "\n")
    sys.path.insert(0, str(REPO))
    import tempfile

    from envkit.history.store import History
    from envkit.metrics.exposition import render
    from envkit.metrics.from_history import history_samples

    with tempfile.TemporaryDirectory() as folder:
        history = History(Path(folder) / "history.sqlite3")
        history.record(dict(report, target="local://gpu-evidence"), "gpu-evidence")
        (out / "metrics.prom").write_text(render(history_samples(history)))
        history.close()


def publish(out: Path, evidence: Path = EVIDENCE) -> Path:
    sys.path.insert(0, str(REPO))
    from envkit.report.html import to_html
    from envkit.verify.combine import combine

    report = json.loads((out / "report.json").read_text())
    (out / "report.html").write_text(to_html(combine([report], {})), encoding="utf-8")
    gpus = report["environment"].get("gpus") or [{"name": "no-gpu"}]
    gpu = re.sub(r"[^a-z0-9]+", "-", str(gpus[0].get("name", "gpu")).lower()).strip("-")
    day = (out / "date.txt").read_text()[:10]
    target = evidence / f"{day}-{gpu}"
    target.mkdir(parents=True, exist_ok=True)
    for name in ("report.json", "report.html", "fingerprint.json", "date.txt"):
        shutil.copy(out / name, target / name)
    for name in ("health.txt", "metrics.prom"):  # where the run made them
        if (out / name).is_file():
            shutil.copy(out / name, target / name)
    if (out / "matmul-method.json").is_file():  # only where a GPU measured it
        shutil.copy(out / "matmul-method.json", target / "matmul-method.json")
    return target


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    verbs = parser.add_subparsers(dest="verb", required=True)
    ran = verbs.add_parser("run", help="run the suite here (needs torch only)")
    ran.add_argument("--out", type=Path, required=True)
    ran.add_argument(
        "--no-require-gpu", action="store_true", help="for a dry run on a machine without GPUs"
    )
    ran.add_argument("--stress", type=float, default=60.0, help="burn-in seconds (0: none)")
    published = verbs.add_parser("publish", help="add the HTML report, copy to docs/evidence")
    published.add_argument("out", type=Path)
    published.add_argument("--into", type=Path, default=EVIDENCE, help="evidence folder")
    args = parser.parse_args()
    if args.verb == "run":
        return run(args.out, not args.no_require_gpu, args.stress)
    print(publish(args.out, args.into))
    return 0


if __name__ == "__main__":
    sys.exit(main())
