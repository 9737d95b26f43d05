"""What an offline bundle costs, side by side in one run on the CPU example: its size against
`docker save` of the same image (what a site would otherwise carry), the time to make it, and
the suite's time through the bundle's SquashFS (`verify --bundle`, Charliecloud's ch-run)
against a throwaway container of the image (`verify --image`), and a rebuild from the bundle
alone (`build --offline --from`) against the same lock's rebuild from the network (`build
--locked`), both --no-cache; interleaved runs, medians.

    python benchmarks/bench_bundle.py [--runs 5] [--rebuilds 3] [--json out.json]

Builds the e2e project's image first (cached by tag). Ratios, not absolute times, are the
figures on a machine like this one (2 cores, fuse-overlayfs).
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
sys.path.insert(0, str(REPO))


def _timed(project: Path, *args: str) -> float:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "envkit", *args], cwd=project, capture_output=True, text=True
    )
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"envkit {' '.join(args)}: {done.stdout[-1500:]}{done.stderr[-1500:]}")
    return seconds


def _docker_save_bytes(image: str) -> int:
    """The size of `docker save IMAGE`, counted as it streams (nothing written)."""
    saved = subprocess.Popen(["docker", "save", image], stdout=subprocess.PIPE)
    assert saved.stdout is not None
    total = 0
    while chunk := saved.stdout.read(1 << 20):
        total += len(chunk)
    if saved.wait() != 0:
        raise SystemExit(f"docker save {image} failed")
    return total


def _sizes(bundle: Path) -> dict[str, int]:
    files = [p for p in bundle.rglob("*") if p.is_file()]
    parts = {
        "image.tar": (bundle / "image.tar").stat().st_size,
        "rootfs.sqfs": (bundle / "rootfs.sqfs").stat().st_size,
    }
    for folder in ("wheels", "debs"):
        inside = (p for p in files if p.parts[len(bundle.parts)] == folder)
        parts[f"{folder}/"] = sum(p.stat().st_size for p in inside)
    parts["total"] = sum(p.stat().st_size for p in files)
    return parts


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--rebuilds", type=int, default=3)
    parser.add_argument("--json")
    args = parser.parse_args()
    from tests.e2e.images import ensure_base_image, project_config

    project = Path(tempfile.mkdtemp(prefix="bench-bundle-"))
    project_config(project)
    ensure_base_image()
    _timed(project, "build", "--quiet")
    from envkit.services.project import project_or_defaults

    image = project_or_defaults(str(project / "envkit.yaml")).plan.image.tag
    bundle = project / "bundle"
    bundle_s = _timed(project, "bundle", "-o", str(bundle))
    sizes = _sizes(bundle)
    saved = _docker_save_bytes(image)
    quiet = ("--no-bench", "--no-history", "--quiet")
    by_bundle: list[float] = []
    by_image: list[float] = []
    for _ in range(args.runs):  # interleaved, so drift on the machine falls on both
        by_bundle.append(_timed(project, "verify", "--bundle", str(bundle), *quiet))
        by_image.append(_timed(project, "verify", "--image", image, *quiet))
    shutil.copy(bundle / "envkit.lock", project / "envkit.lock")
    scratch = ("--no-cache", "--quiet", "--tag", "envkit-bench/rebuilt:latest")
    offline: list[float] = []
    online: list[float] = []
    for _ in range(args.rebuilds):
        offline.append(_timed(project, "build", "--offline", "--from", str(bundle), *scratch))
        online.append(_timed(project, "build", "--locked", *scratch))
    subprocess.run(["docker", "rmi", "-f", "envkit-bench/rebuilt:latest"], capture_output=True)
    result = {
        "image": image,
        "docker_save_bytes": saved,
        "bundle_bytes": sizes,
        "bundle_over_docker_save": round(sizes["total"] / saved, 3),
        "sqfs_over_docker_save": round(sizes["rootfs.sqfs"] / saved, 3),
        "bundle_s": round(bundle_s, 1),
        "verify_bundle_median_s": round(statistics.median(by_bundle), 2),
        "verify_image_median_s": round(statistics.median(by_image), 2),
        "verify_bundle_over_image": round(
            statistics.median(by_bundle) / statistics.median(by_image), 3
        ),
        "runs": args.runs,
        "rebuild_offline_median_s": round(statistics.median(offline), 1),
        "rebuild_locked_median_s": round(statistics.median(online), 1),
        "rebuild_offline_over_locked": round(
            statistics.median(offline) / statistics.median(online), 3
        ),
        "rebuilds": args.rebuilds,
    }
    print(json.dumps(result, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    shutil.rmtree(project, ignore_errors=True)


if __name__ == "__main__":
    main()
