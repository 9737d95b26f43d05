"""`envkit down`: stop and remove the environment's containers (volumes kept unless --volumes)."""

from __future__ import annotations

import sys
from dataclasses import dataclass

from envkit.engine.client import containers, docker_client, project_volumes
from envkit.engine.compose import run_compose, use_sdk
from envkit.engine.facts import engine_facts
from envkit.errors import EnvkitError
from envkit.services.project import load_project


@dataclass(frozen=True, kw_only=True)
class DownRequest:
    config: str | None = None
    volumes: bool = False


def run(request: DownRequest) -> int:
    volumes = request.volumes
    project = load_project(request.config)
    plan, out_dir = project.plan, project.context_dir
    if not (out_dir / "docker-compose.yml").is_file():
        raise EnvkitError(f"nothing rendered in {out_dir}", "run `envkit up` first")

    client = docker_client()
    facts = engine_facts(client)
    if not use_sdk(facts.remote or facts.podman):
        run_compose(out_dir, plan.project, "down")  # its network too
    # By label, on both paths: every container `up` made, members who have left included.
    for container in containers(client, plan.project):
        container.remove(force=True)
    if volumes:
        # Likewise by label: compose alone would keep the volumes of members who have left.
        for volume in client.volumes.list(filters=project_volumes(plan.project)):
            volume.remove(force=True)
    sys.stdout.write(
        f"{plan.project}: stopped"
        + (
            " and its volumes removed\n"
            if volumes
            else " (volumes kept: host keys stay the same)\n"
        )
    )
    return 0
