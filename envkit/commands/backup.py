"""`envkit backup [MEMBER...] [--to DIR] [--cache]`: each member's home (every home of the
project where none is named, departed members' too), and the shared cache if asked, as a
compressed tar stream from the engine with a manifest beside it (sizes, sha256, the image and
inputs it was taken from). `envkit restore` puts one back."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from envkit.engine.client import docker_client, require_image
from envkit.engine.volumes import VolumeInfo, project_volumes
from envkit.errors import EnvkitError
from envkit.lock.requested import INPUTS_LABEL
from envkit.services.backups import write_backup
from envkit.services.project import load_project

DEFAULT_FOLDER = Path("envkit-backups")


@dataclass(frozen=True, kw_only=True)
class BackupRequest:
    config: str | None = None
    members: tuple[str, ...] = ()  # none: every home of the project
    to: Path = DEFAULT_FOLDER
    cache: bool = False  # the shared cache too


def chosen(found: list[VolumeInfo], members: tuple[str, ...], cache: bool) -> list[VolumeInfo]:
    homes = [v for v in found if v.kind == "home"]
    if members:
        known = {v.member for v in homes}
        if missing := [m for m in members if m not in known]:
            shown = ", ".join(sorted(m for m in known if m)) or "none yet"
            raise EnvkitError(
                f"no home volume for {', '.join(missing)}", f"homes of this project: {shown}"
            )
        homes = [v for v in homes if v.member in members]
    return homes + ([v for v in found if v.kind == "cache"] if cache else [])


def run(request: BackupRequest) -> int:
    plan = load_project(request.config).plan
    client = docker_client()
    volumes = chosen(project_volumes(client, plan.project), request.members, request.cache)
    if not volumes:
        raise EnvkitError(
            f"{plan.project} has no home volume yet", "`envkit up` makes one per member"
        )
    image = require_image(client, plan.image.tag, "`envkit build` (or `envkit pull`) first")
    for volume in volumes:
        made = write_backup(
            client, image, volume, plan.project, request.to, image.labels.get(INPUTS_LABEL)
        )
        sys.stdout.write(
            f"{volume.name}: {made.files} files, {made.data_bytes / 1e6:.1f} MB -> "
            f"{request.to / made.archive} ({made.compressed_bytes / 1e6:.1f} MB, sha256 "
            f"{made.sha256[:12]}...)\n"
        )
    return 0
