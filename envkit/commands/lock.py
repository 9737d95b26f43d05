"""`envkit lock`: write envkit.lock from the built image (everything installed in it)."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from envkit.checks.programs.lockstate import INDEX_INSTALLERS
from envkit.errors import EnvkitError
from envkit.files import write_atomically
from envkit.lock.make import make_lock
from envkit.services.project import LOCK_FILE, Project, load_project


@dataclass(frozen=True, kw_only=True)
class LockRequest:
    config: str | None = None
    lock_file: Path | None = None  # where to write (default envkit.lock beside the config)
    tag: str | None = None  # the image to lock (default the project's)
    platform: str | None = None  # --platform: that platform's image of a multi-platform build


def _platform_image(project: Project, platform: str | None) -> str:
    """The image a lock is made from: the project's, or one platform's of several."""
    if platform is None:
        return project.plan.image.tag
    from envkit.engine.client import docker_client
    from envkit.services.sharing import build_platforms, local_images

    client = docker_client()
    (chosen,) = build_platforms(project, client, platform)
    return local_images(project, build_platforms(project, client))[chosen]


def run(request: LockRequest) -> int:
    project = load_project(request.config)
    image = request.tag or _platform_image(project, request.platform)
    made = make_lock(project.plan, image)
    path = request.lock_file or project.project_dir / LOCK_FILE
    if path.is_dir():
        raise EnvkitError(f"--lock-file {path} is a folder", "name the lock file, e.g. envkit.lock")
    write_atomically(path, made.text)
    lock = made.lock
    added = sum(1 for _, origin in lock["apt"].values() if origin == "added")
    by_pip = [name for name, values in lock["pip"].items() if values[1] in INDEX_INSTALLERS]
    torch, cuda = lock["torch"]["torch"][0], lock["torch"]["cuda"][0]
    sys.stdout.write(
        f"wrote {path} from {image}: {len(lock['apt'])} apt packages ({added} added by the "
        f"build), {len(lock['conda'])} conda, {len(by_pip)} from a pip index "
        f"({len(by_pip) - len(made.unhashed)} with the index's sha256), torch {torch} "
        f"(CUDA {cuda})\n"
    )
    if made.unhashed:
        sys.stdout.write(
            "note: no index served sums for "
            + ", ".join(made.unhashed)
            + ": `envkit build --locked` pins their versions but cannot --require-hashes\n"
        )
    sys.stdout.write("next: commit it beside envkit.yaml; rebuild with `envkit build --locked`\n")
    return 0
