"""`envkit down`: stop and remove the environment's containers. Members' homes, the shared cache
and host keys are volumes, and stay: the next `envkit up` finds every file where it was.
`--volumes` deletes them too, and only once the project's name is typed (or --yes is given):
it names every volume it would delete, with its size, first."""

from __future__ import annotations

import sys
from dataclasses import dataclass

from envkit.commands import confirm_by_name
from envkit.engine.client import containers, docker_client
from envkit.engine.compose import run_compose, use_sdk
from envkit.engine.facts import engine_facts
from envkit.engine.volumes import VolumeInfo, project_volumes
from envkit.errors import EnvkitError
from envkit.services.project import load_project


@dataclass(frozen=True, kw_only=True)
class DownRequest:
    config: str | None = None
    volumes: bool = False  # also delete the project's volumes: homes, cache, host keys
    yes: bool = False  # delete them without asking (scripts); never implied


def _size(volume: VolumeInfo) -> str:
    return f"{volume.size / 1e6:.1f} MB" if volume.size is not None else "size unknown"


def confirm_deletion(project: str, found: list[VolumeInfo], yes: bool) -> None:
    """Name what would be deleted; go on only with --yes or the project's name typed."""
    listing = "; ".join(
        f"{v.name} ({v.kind}{' of ' + v.member if v.member else ''}, {_size(v)})" for v in found
    )
    fix = (
        "`envkit backup` first; then `envkit down --volumes` on a terminal (type the project's "
        "name), or add --yes in a script"
    )
    confirm_by_name("--volumes", listing, ("project's name", project), yes, fix)


def run(request: DownRequest) -> int:
    project = load_project(request.config)
    plan, out_dir = project.plan, project.context_dir
    if not (out_dir / "docker-compose.yml").is_file():
        raise EnvkitError(f"nothing rendered in {out_dir}", "run `envkit up` first")
    client = docker_client()
    found = project_volumes(client, plan.project) if request.volumes else []
    if request.volumes and found:  # asked before anything is stopped
        confirm_deletion(plan.project, found, request.yes)
    facts = engine_facts(client)
    if not use_sdk(facts.remote or facts.podman):
        run_compose(out_dir, plan.project, "down")  # its network too; never -v
    # By label, on both paths: every container `up` made, members who have left included.
    for container in containers(client, plan.project):
        container.remove(force=True)
    for volume in found:  # by label, members who have left included; named above
        client.volumes.get(volume.name).remove(force=True)
    if found:
        sys.stdout.write(f"{plan.project}: stopped; deleted {len(found)} volume(s)\n")
    else:
        sys.stdout.write(
            f"{plan.project}: stopped (homes, the shared cache and host keys are kept: "
            "`envkit up` brings everyone back to their files)\n"
        )
    return 0
