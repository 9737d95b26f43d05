"""`envkit restore ARCHIVE [--member NAME] [--force]`: a backup put back into its volume (or the
named member's home), checked against its manifest's sha256 first. It refuses a volume that
holds anything, or one a running container uses, unless --force."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from docker.errors import NotFound

from envkit.engine.client import PROJECT_LABEL, docker_client, require_image
from envkit.engine.volumes import volume_is_empty
from envkit.errors import EnvkitError
from envkit.plan.box.containers import MEMBER_LABEL, VOLUME_LABEL, home_volume
from envkit.plan.models.plan import Plan
from envkit.services.backups import checked_archive, read_manifest, restore_backup
from envkit.services.project import load_project


@dataclass(frozen=True, kw_only=True)
class RestoreRequest:
    config: str | None = None
    archive: Path
    member: str | None = None  # into this member's home instead of the one it was taken from
    force: bool = False  # into a volume that holds files, or is in use


def _target(plan: Plan, kind: str, volume: str, asked: str | None) -> str:
    """The volume to restore into: the backup's own, or the home of the member asked for."""
    if asked is None:
        return volume
    if kind != "home":
        raise EnvkitError(f"{volume} is not a home", "drop --member: it restores into its own")
    for service in plan.services:
        if asked in (service.member, service.user):
            return home_volume(plan.project, service).engine_name(plan.project)
    return f"{plan.project}_{plan.project}-{asked}-home"  # a member who has left


def run(request: RestoreRequest) -> int:
    plan = load_project(request.config).plan
    manifest = read_manifest(request.archive)
    if manifest.project != plan.project:
        raise EnvkitError(
            f"{request.archive} is a backup of {manifest.project}, not {plan.project}",
            "restore it with that project's envkit.yaml (-c)",
        )
    checked_archive(request.archive, manifest)
    client = docker_client()
    image = require_image(client, plan.image.tag, "`envkit build` (or `envkit pull`) first")
    member = request.member or manifest.member
    name = _target(plan, manifest.kind, manifest.volume, request.member)
    try:
        client.volumes.get(name)
        exists = True
    except NotFound:
        labels = {PROJECT_LABEL: plan.project, VOLUME_LABEL: manifest.kind}
        client.volumes.create(name, labels={**labels, **({MEMBER_LABEL: member} if member else {})})
        exists = False
    users = [c.name for c in client.containers.list(filters={"volume": name})]
    if users and not request.force:
        raise EnvkitError(
            f"{name} is in use by {', '.join(users)}",
            "`envkit down` (or `docker stop` it) first, or --force to restore into it as it runs",
        )
    if exists and not request.force and not volume_is_empty(client, image.id, name):
        raise EnvkitError(
            f"{name} already holds files: restoring would write over them",
            "restore into a new volume (`--member` another name), or --force to write over",
        )
    sent = restore_backup(client, image.id, request.archive, name)
    sys.stdout.write(
        f"restored {manifest.files} files ({sent / 1e6:.1f} MB) from {request.archive} "
        f"into {name}\n"
    )
    return 0
