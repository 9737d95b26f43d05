"""`envkit start [MEMBER]`: start containers that stopped (team.idle_stop, a reboot) without
`envkit up`'s render and image steps; ready once their sshd answers. The generated ssh-config
runs it as a member connects, so it is quick and quiet, and never creates anything: a container
that does not exist yet is `envkit up`'s."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from typing import Any

from envkit.engine.client import docker_client
from envkit.engine.compose import answers_ready
from envkit.errors import EngineUnreachableError
from envkit.services.project import chosen_service, existing_container, load_project


def _ready(container: Any, deadline: float) -> bool:
    """sshd answers inside the container: the image's own health check, run now rather than
    at the engine's next interval (ten seconds a member would wait at the prompt)."""
    while time.monotonic() < deadline:
        container.reload()
        if container.status != "running":
            return False
        if answers_ready(container):
            return True
        time.sleep(0.3)
    return False


@dataclass(frozen=True, kw_only=True)
class StartRequest:
    config: str | None = None
    member: str | None = None  # only this member's container
    timeout: float = 60.0  # seconds to wait for sshd
    quiet: bool = False


def run(request: StartRequest) -> int:
    member, timeout, quiet = request.member, request.timeout, request.quiet
    plan = load_project(request.config).plan
    # A member names one container (as for shell and exec); none, every container.
    services = list(plan.services) if member is None else [chosen_service(plan, member)]
    client = docker_client()
    deadline = time.monotonic() + timeout
    for service in services:
        container = existing_container(client, service)
        was = container.status
        if was != "running":
            container.start()
        if not _ready(container, deadline):
            raise EngineUnreachableError(
                f"{service.container_name} did not become ready in {timeout:g} s",
                f"see `docker logs {service.container_name}`",
            )
        if not quiet:
            done = "started" if was != "running" else "already running"
            sys.stdout.write(f"{service.container_name}: {done}\n")
    return 0
