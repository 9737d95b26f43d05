"""`envkit bundle -o DIR`: the built image and everything a site without internet needs for it
(envkit/bundle/make.py), into a new or empty folder."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from envkit.errors import EnvkitError
from envkit.services.project import LOCK_FILE, load_project


@dataclass(frozen=True, kw_only=True)
class BundleRequest:
    config: str | None = None
    out: Path


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def run(request: BundleRequest) -> int:
    from envkit.bundle.make import make_bundle
    from envkit.engine.client import docker_client
    from envkit.lock.make import make_lock
    from envkit.supply.parts import inventory
    from envkit.supply.sbom_cyclonedx import cyclonedx_json

    project = load_project(request.config)
    out = request.out
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise EnvkitError(
            f"-o {out} is not a new or empty folder",
            "name a new folder: a bundle never writes over files",
        )
    # The image's own lock, read from it (it refuses an image of another config): what the
    # bundle carries is exactly what the image holds.
    made = make_lock(project.plan, project.plan.image.tag)
    texts = {
        "envkit.yaml": project.config.read_text(encoding="utf-8"),
        LOCK_FILE: made.text,
        "sbom.cdx.json": cyclonedx_json(inventory(made.lock, made.text, project.plan)),
    }
    out.mkdir(parents=True, exist_ok=True)
    python = f"{project.plan.python.bin_dir}/python"
    make_bundle(docker_client(), project.plan, out, texts, made.lock, python, _say)
    _say(f"bundle ready: {out} (check it anywhere with `envkit verify --bundle {out}`)")
    return 0
