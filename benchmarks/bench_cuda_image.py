"""The CUDA image (Debian base + PyPI's CUDA torch + SSH) beside the CPU image (Debian's torch),
built cold (--no-cache) one after the other in one run: build time and image size.

    python benchmarks/bench_cuda_image.py [--json benchmarks/cuda_image.json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.e2e.images import (  # noqa: E402
    BASE_IMAGE,
    cuda_project_config,
    docker,
    ensure_base_image,
    newest_pypi_torch,
    project_config,
)

TAGS = {"cpu": "envkit-bench/cpu:latest", "cuda": "envkit-bench/cuda:latest"}


def cold_build(project: Path, tag: str) -> float:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "envkit", "build", "--quiet", "--no-cache", "--tag", tag],
        cwd=project,
        check=False,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"building {tag} failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    return time.perf_counter() - start


def size_mb(tag: str) -> float:
    return int(docker("image", "inspect", "-f", "{{.Size}}", tag).stdout.strip()) / 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    ensure_base_image()
    figures: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as cpu_dir, tempfile.TemporaryDirectory() as cuda_dir:
        projects = {"cpu": project_config(Path(cpu_dir)).parent}
        projects["cuda"] = cuda_project_config(Path(cuda_dir)).parent
        try:
            for kind, project in projects.items():
                seconds = cold_build(project, TAGS[kind])
                figures[kind] = {
                    "build_s": round(seconds, 1),
                    "size_mb": round(size_mb(TAGS[kind])),
                }
        finally:
            docker("rmi", "-f", *TAGS.values(), check=False)
    base = size_mb(BASE_IMAGE)
    torch, cuda = newest_pypi_torch()
    result = {
        "date": time.strftime("%Y-%m-%d"),
        "torch": f"{torch} (PyPI, CUDA {cuda})",
        "base_mb": round(base),
        **figures,
        "cuda_over_cpu_build": round(figures["cuda"]["build_s"] / figures["cpu"]["build_s"], 2),
        "cuda_over_cpu_size": round(figures["cuda"]["size_mb"] / figures["cpu"]["size_mb"], 2),
    }
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
