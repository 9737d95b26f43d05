"""`envkit member remove NAME [--delete-home]`: what is left of a member who is no longer in
team.members: their container (if `envkit up` has not removed it yet) goes; their home stays on
its volume unless --delete-home, which offers a backup first and then deletes only once the
member's name is typed (or --yes is given). The one command that deletes a member's home."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from envkit.commands import confirm_by_name
from envkit.commands.backup import DEFAULT_FOLDER
from envkit.engine.client import containers, docker_client, require_image
from envkit.engine.volumes import project_volumes
from envkit.errors import EnvkitError
from envkit.lock.requested import INPUTS_LABEL
from envkit.services.backups import write_backup
from envkit.services.project import load_project


@dataclass(frozen=True, kw_only=True)
class MemberRemoveRequest:
    config: str | None = None
    name: str
    delete_home: bool = False
    yes: bool = False  # delete without asking (scripts)
    backup_to: Path = DEFAULT_FOLDER  # where the home is backed up before it is deleted
    no_backup: bool = False


def run(request: MemberRemoveRequest) -> int:
    plan = load_project(request.config).plan
    name = request.name
    if name in plan.members:
        raise EnvkitError(
            f"{name} is still in team.members",
            f"remove {name} from envkit.yaml first (then `envkit up`), or keep them",
        )
    client = docker_client()
    for container in containers(client, plan.project):
        if container.labels.get("io.envkit.member") == name:
            container.remove(force=True)
            sys.stdout.write(f"{container.name}: removed\n")
    homes = [v for v in project_volumes(client, plan.project, "home") if v.member == name]
    if not homes:
        raise EnvkitError(f"{plan.project} has no home of {name}", "`envkit status` lists them")
    home = homes[0]
    size = f"{home.size / 1e6:.1f} MB" if home.size is not None else "size unknown"
    if not request.delete_home:
        sys.stdout.write(
            f"{home.name} ({size}) is kept; `envkit member remove {name} --delete-home` deletes "
            "it (after a backup)\n"
        )
        return 0
    _confirm(request, home.name, size)
    if not request.no_backup:
        image = require_image(client, plan.image.tag, "`envkit build` first, or --no-backup")
        made = write_backup(
            client, image, home, plan.project, request.backup_to, image.labels.get(INPUTS_LABEL)
        )
        sys.stdout.write(f"backed up {home.name} to {request.backup_to / made.archive}\n")
    client.volumes.get(home.name).remove(force=True)
    sys.stdout.write(f"deleted {home.name}, {name}'s home\n")
    return 0


def _confirm(request: MemberRemoveRequest, volume: str, size: str) -> None:
    name = request.name
    backup = "not backed up (--no-backup)" if request.no_backup else "backed up first"
    what = f"{volume} ({size}), {name}'s home, {backup}"
    fix = f"on a terminal type {name} to confirm, or add --yes in a script"
    confirm_by_name("--delete-home", what, ("member's name", name), request.yes, fix)
