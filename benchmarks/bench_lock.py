"""What `envkit lock` costs on the e2e image, beside what it cannot avoid: starting a container
of the image (it starts two: the image and its base) and one run of the bundle in it.

Interleaved runs, medians:
  1. `docker run --rm IMAGE true`: a bare container start and removal (the floor);
  2. the capture alone (a throwaway container of the image, the bundle's `capture` in it);
  3. the whole `envkit lock` in process (capture, the base's dpkg list, sums from the index).

    python benchmarks/bench_lock.py [--runs 5] [--json out.json]

Builds the e2e image (`envkit/envkit-e2e:latest`) from the e2e project first (cached if current).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
IMAGE = "envkit/envkit-e2e:latest"


def _project() -> Path:
    from tests.e2e.images import ensure_base_image, project_config

    directory = Path(tempfile.mkdtemp(prefix="bench-lock-"))
    project_config(directory)
    ensure_base_image()
    # From the cache when the image is current; `envkit lock` refuses an image of another config.
    subprocess.run([sys.executable, "-m", "envkit", "build", "--quiet"], cwd=directory, check=True)
    return directory


def _timed(work: object) -> float:
    start = time.perf_counter()
    work()  # type: ignore[operator]
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json")
    args = parser.parse_args()
    project = _project()
    from envkit.lock import make
    from envkit.services.project import load_project

    plan = load_project(str(project / "envkit.yaml")).plan
    cases = {
        "docker run --rm IMAGE true": lambda: subprocess.run(
            ["docker", "run", "--rm", "--entrypoint", "true", IMAGE], check=True
        ),
        "capture in the image": lambda: make.capture_state(f"image://{IMAGE}", plan.conda_prefix),
        "envkit lock (whole)": lambda: make.make_lock(plan, IMAGE),
    }
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(args.runs):
        for name, work in cases.items():
            times[name].append(_timed(work))
    floor = statistics.median(times["docker run --rm IMAGE true"])
    rows = []
    print("| step | median | x bare container |")
    print("| --- | --- | --- |")
    for name, values in times.items():
        median = statistics.median(values)
        rows.append({"case": name, "median_s": round(median, 3), "ratio": round(median / floor, 2)})
        print(f"| {name} | {median:.2f} s | {median / floor:.2f}x |")
    if args.json:
        Path(args.json).write_text(json.dumps({"runs": args.runs, "rows": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
