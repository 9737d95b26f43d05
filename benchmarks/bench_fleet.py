"""What envkit adds when it verifies N targets at once (N = 1, 2, 4, 8), side by side in one run.

For each N, interleaved and repeated, two ways to run the same light check selection in N
running containers of the e2e image:
- bare: the bundle already copied into each container, N threads each running
  `docker exec C python3 bundle run ...` (the least any tool must do);
- envkit: `envkit verify --target docker://C ... --parallel 8` (open each target, ship the
  bundle, find python, run, fetch and merge the reports, print the table).
Both pay the same CPU for N torch imports on this 2-core machine, so envkit - bare is what the
orchestration costs, and its growth from N=1 to N=8 is the cost per extra target.

    python benchmarks/bench_fleet.py [--runs 5] [--json benchmarks/fleet.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.e2e.images import TEST_LABEL, docker, ensure_base_image, project_config  # noqa: E402

IMAGE = "envkit/envkit-e2e:latest"
ONLY = ["tensor.creation", "autograd.seed_examples"]
SIZES = (1, 2, 4, 8)


def _ensure_image() -> bool:
    """Build the e2e image unless it exists; True when this run built it (and must remove it)."""
    if docker("image", "inspect", IMAGE, check=False).returncode == 0:
        return False
    ensure_base_image()
    with tempfile.TemporaryDirectory() as directory:
        project_config(Path(directory))
        subprocess.run(
            [sys.executable, "-m", "envkit", "build", "--quiet"], cwd=directory, check=True
        )
    return True


def _start(count: int, bundle: Path) -> list[str]:
    names = []
    for _ in range(count):
        name = f"envkit-bench-fleet-{uuid.uuid4().hex[:8]}"
        docker("run", "-d", "--name", name, "--label", f"{TEST_LABEL}=bench", IMAGE)
        docker("cp", str(bundle), f"{name}:/tmp/bench-bundle.zip")
        names.append(name)
    return names


def _bare(names: list[str]) -> float:
    config = json.dumps({"only": ONLY, "bench": False})

    def one(name: str) -> None:
        subprocess.run(
            ["docker", "exec", name, "python3", "/tmp/bench-bundle.zip", "run", "--config", config,
             "--out", "/tmp/bench-report.json"],
            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip

    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=len(names)) as pool:
        list(pool.map(one, names))
    return time.perf_counter() - start


def _envkit(names: list[str], out: Path) -> float:
    targets = [arg for n in names for arg in ("--target", f"docker://{n}")]
    only = [arg for check in ONLY for arg in ("--only", check)]
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "envkit", "verify", *targets, *only, "--parallel", "8",
         "--no-bench", "-q", "--json-file", str(out)],
        cwd=out.parent, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False,
    )  # fmt: skip
    seconds = time.perf_counter() - start
    report = json.loads(out.read_text())
    if done.returncode != 0 or report["summary"]["pass"] != len(ONLY) * len(names):
        raise SystemExit(f"envkit verify failed on {len(names)} targets: {done.stderr[-800:]}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    from envkit.verify.bundle import build_bundle

    built = _ensure_image()
    with tempfile.TemporaryDirectory() as directory:
        bundle = Path(directory) / "bundle.zip"
        bundle.write_bytes(build_bundle())
        names = _start(max(SIZES), bundle)
        try:
            _bare(names[:1])  # warm the page cache for torch in the image
            samples: dict[str, dict[int, list[float]]] = {"bare": {}, "envkit": {}}
            for _ in range(args.runs):
                for n in SIZES:
                    samples["bare"].setdefault(n, []).append(_bare(names[:n]))
                    out = Path(directory) / "report.json"
                    samples["envkit"].setdefault(n, []).append(_envkit(names[:n], out))
        finally:
            for name in names:
                docker("rm", "-f", name, check=False)
            if built:  # leave no layers behind for later builds to hit by surprise
                docker("rmi", IMAGE, check=False)
    report = _summarise(samples, args.runs)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")


def _summarise(samples: dict[str, dict[int, list[float]]], runs: int) -> dict[str, Any]:
    rows = []
    for n in SIZES:
        bare = statistics.median(samples["bare"][n])
        envkit = statistics.median(samples["envkit"][n])
        rows.append({"targets": n, "bare_s": bare, "envkit_s": envkit, "overhead_s": envkit - bare})
    first, last = rows[0], rows[-1]
    per_extra = (last["overhead_s"] - first["overhead_s"]) / (last["targets"] - first["targets"])
    print(f"{'N':>2} {'bare':>8} {'envkit':>8} {'overhead':>9}")
    for row in rows:
        print(
            f"{row['targets']:>2} {row['bare_s']:7.2f}s {row['envkit_s']:7.2f}s "
            f"{row['overhead_s']:8.2f}s"
        )
    print(f"orchestration cost per extra target (N=1 -> N=8): {per_extra:.3f}s")
    return {
        "runs": runs,
        "checks": ONLY,
        "rows": [
            {k: (round(v, 3) if isinstance(v, float) else v) for k, v in r.items()} for r in rows
        ],
        "overhead_per_extra_target_s": round(per_extra, 3),
    }


if __name__ == "__main__":
    main()
