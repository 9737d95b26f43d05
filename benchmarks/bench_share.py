"""Sharing the team's image, on real parts (needs Docker, buildx, Debian's docker-registry and
apache2-utils, podman and catatonit; the test base image is made if missing):

1. A second engine (Podman's API service, storage of its own, the registry allowed over HTTP):
   `envkit up` that pulls the team's image from the registry vs `envkit up --build` that builds
   it there, each on a fresh Podman store holding only the base image, side by side; the ratio.
2. envkit's overhead on the registry's own work: `envkit push` / `envkit pull` of one image vs
   `docker push` / `docker pull` of the same image, each pushed to a registry of its own (no layer
   already there) and pulled after the image was removed, side by side.

    python benchmarks/bench_share.py [--image cpu|cuda] [--json benchmarks/share.json]

`--image cuda` measures part 2 on the e2e CUDA image (PyPI's CUDA torch, about 7 GB) and skips
part 1 (Podman would build the same CPU-bound steps; the pull is what grows)."""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.e2e.engines import running_podman  # noqa: E402
from tests.e2e.images import (  # noqa: E402
    BASE_IMAGE,
    cuda_project_config,
    docker,
    ensure_base_image,
    project_config,
)
from tests.e2e.registry import Registry, running_registry  # noqa: E402

ENVKIT = (sys.executable, "-m", "envkit")


def envkit(project: Path, env: dict[str, str], *args: str) -> tuple[float, str]:
    """Seconds and output of one envkit command; a failure stops the benchmark."""
    start = time.monotonic()
    done = subprocess.run(
        [*ENVKIT, *args], cwd=project, env=env, capture_output=True, text=True, check=False
    )
    seconds = time.monotonic() - start
    if done.returncode != 0:
        raise SystemExit(f"envkit {' '.join(args)} failed:\n{done.stdout[-3000:]}{done.stderr}")
    return seconds, done.stdout


def timed(*args: str, env: dict[str, str] | None = None) -> float:
    start = time.monotonic()
    subprocess.run(args, check=True, capture_output=True, env=env, timeout=3600)
    return time.monotonic() - start


def second_engine(project: Path, registry: Registry, scratch: Path) -> dict[str, Any]:
    """Part 1: up from the registry vs up --build, each on a fresh Podman store."""
    rows: dict[str, Any] = {}
    for how, args in (("pull", ()), ("build", ("--build",))):
        root = scratch / f"podman-{how}"
        root.mkdir()
        with running_podman(root, insecure_registry=registry.address) as podman:
            env = {**base_env(registry), "DOCKER_HOST": podman.url}
            seconds, said = envkit(project, env, "up", *args)
            assert ("pulling" in said) == (how == "pull"), said
            rows[f"up_{how}_s"] = round(seconds, 1)
            envkit(project, env, "down", "--volumes")
    rows["ratio_pull_to_build"] = round(rows["up_pull_s"] / rows["up_build_s"], 3)
    return rows


def base_env(registry: Registry) -> dict[str, str]:
    import os

    return {**os.environ, **registry.env()}


def overhead(project: Path, text: str, tag: str, scratch: Path) -> dict[str, Any]:
    """Part 2: envkit push/pull vs docker push/pull of the same image, fresh registries."""
    rows: dict[str, Any] = {}
    (scratch / "reg-docker").mkdir()
    (scratch / "reg-envkit").mkdir()
    with (
        running_registry(scratch / "reg-docker") as plain,
        running_registry(scratch / "reg-envkit") as ours,
    ):
        (project / "envkit.yaml").write_text(text + f"registry: {ours.address}/team\n")
        image_id = docker("image", "inspect", "-f", "{{.Id}}", tag).stdout.strip()
        plain_ref = f"{plain.address}/team/bench:plain"
        docker("tag", tag, plain_ref)
        cli = {**base_env(plain), "DOCKER_CONFIG": str(plain.docker_config)}
        rows["docker_push_s"] = round(timed("docker", "push", plain_ref, env=cli), 1)
        env = base_env(ours)
        seconds, _ = envkit(project, env, "push")
        rows["envkit_push_s"] = round(seconds, 1)
        docker("rmi", "-f", image_id)  # every name of it: both pulls fetch every layer
        # Layers are shared by content: an untagged image from an earlier build holds the same
        # ones, and a pull would then fetch nothing.
        docker("image", "prune", "-f")
        rows["docker_pull_s"] = round(timed("docker", "pull", plain_ref, env=cli), 1)
        docker("rmi", "-f", image_id)
        docker("image", "prune", "-f")
        seconds, _ = envkit(project, env, "pull")
        rows["envkit_pull_s"] = round(seconds, 1)
        again = docker("image", "inspect", "-f", "{{.Id}}", tag).stdout.strip()
        assert again == image_id, "the image pulled is the image pushed"
    rows["push_ratio"] = round(rows["envkit_push_s"] / rows["docker_push_s"], 3)
    rows["pull_ratio"] = round(rows["envkit_pull_s"] / rows["docker_pull_s"], 3)
    rows["image_mb"] = round(int(docker("image", "inspect", "-f", "{{.Size}}", tag).stdout) / 1e6)
    base = int(docker("image", "inspect", "-f", "{{.Size}}", BASE_IMAGE).stdout)
    rows["moved_mb"] = rows["image_mb"] - round(base / 1e6)  # the base's layers stay on the engine
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--image", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    ensure_base_image()
    scratch = Path(tempfile.mkdtemp(prefix="envkit-bench-share-"))
    project = scratch / "project"
    project.mkdir()
    config = cuda_project_config(project) if args.image == "cuda" else project_config(project)
    text = config.read_text().replace("name: envkit-e2e", "name: envkit-bench-share")
    results: dict[str, Any] = {"date": time.strftime("%Y-%m-%d"), "image": args.image}
    tag = "envkit/envkit-bench-share:latest"
    try:
        (scratch / "reg-team").mkdir()
        with running_registry(scratch / "reg-team") as registry:
            config.write_text(text + f"registry: {registry.address}/team\n")
            env = base_env(registry)
            seconds, _ = envkit(project, env, "build", "--build")
            results["build_on_docker_s"] = round(seconds, 1)
            if args.image == "cpu":
                envkit(project, env, "push")
                results["second_engine"] = second_engine(project, registry, scratch)
        results["overhead"] = overhead(project, text, tag, scratch)
    finally:
        for ref in docker("images", "--format", "{{.Repository}}:{{.Tag}}").stdout.split():
            if "envkit-bench-share" in ref or "/team/bench:" in ref:
                docker("rmi", "-f", ref, check=False)
        subprocess.run(["umount", "-R", str(scratch)], capture_output=True, check=False)
        shutil.rmtree(scratch, ignore_errors=True)
    print(json.dumps(results, indent=2))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
