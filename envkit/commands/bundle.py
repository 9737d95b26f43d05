"""`envkit bundle -o DIR`: the built image and everything a site without internet needs for it
(envkit/bundle/make.py), into a new or empty folder."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envkit.checks.programs.lockfile import Lock
from envkit.errors import EnvkitError
from envkit.services.project import LOCK_FILE, Project, load_project
from envkit.services.sharing import say
from envkit.supply.cosign import open_key


@dataclass(frozen=True, kw_only=True)
class BundleRequest:
    config: str | None = None
    out: Path
    sign: Path | None = None  # --sign KEY: cosign signs the manifest (so every file) with it
    sif: bool = False  # --sif: rootfs.sif beside rootfs.sqfs (siftool)
    squashfs: bool = True  # --no-squashfs: no rootfs.sqfs (a site that runs an engine)


def _provenance(project: Project, client: Any, lock: Lock, lock_text: str) -> str:
    """The SLSA v1 predicate of what built the image (supply/provenance.py), as JSON."""
    import json

    from envkit.engine.facts import engine_facts
    from envkit.engine.registry import inputs_tag
    from envkit.services.sharing import build_platforms, inputs_of
    from envkit.supply.provenance import provenance

    tag = inputs_tag(inputs_of(project, None, platforms=build_platforms(project, client)))
    engine = {"engine": engine_facts(client).name}
    made = provenance(project.plan, project.config, lock, lock_text, tag, engine)
    return json.dumps(made, indent=2, sort_keys=True) + "\n"


def run(request: BundleRequest) -> int:
    from envkit.bundle.make import make_bundle, require_tools
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
    if request.sif and not request.squashfs:
        raise EnvkitError("--sif wraps the SquashFS that --no-squashfs leaves out", "drop one")
    require_tools(request.sif, request.squashfs)
    # A wrong key or password stops here, before any work.
    password = open_key(request.sign) if request.sign is not None else None
    # The image's own lock, read from it (it refuses an image of another config): what the
    # bundle carries is exactly what the image holds.
    made = make_lock(project.plan, project.plan.image.tag)
    client = docker_client()
    texts = {
        "envkit.yaml": project.config.read_text(encoding="utf-8"),
        LOCK_FILE: made.text,
        "sbom.cdx.json": cyclonedx_json(inventory(made.lock, made.text, project.plan)),
        "provenance.json": _provenance(project, client, made.lock, made.text),
    }
    made_folder = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    try:
        make_bundle(client, project.plan, out, texts, made.lock, say, request.sif, request.squashfs)
        if request.sign is not None and password is not None:
            from envkit.bundle.manifest import MANIFEST
            from envkit.supply.cosign import sign_blob

            say(f"{sign_blob(out / MANIFEST, request.sign, password).name}: the manifest signed")
    except BaseException:
        # Everything in OUT is this run's (it was new or empty): a half bundle is not left.
        if made_folder:
            shutil.rmtree(out, ignore_errors=True)
        else:
            for item in out.iterdir():
                shutil.rmtree(item) if item.is_dir() else item.unlink()
        raise
    say(f"bundle ready: {out} (check it anywhere with `envkit verify --bundle {out}`)")
    return 0
