"""Which of the project's containers a command means: the one in shared mode, the named member's
in per-member mode (or the only one there is), with the running container itself, or the fix."""

from __future__ import annotations

from typing import Any

from docker.errors import NotFound

from envkit.errors import EnvkitError
from envkit.plan.box.access import Service
from envkit.plan.models.plan import Plan


def chosen_service(plan: Plan, member: str | None) -> Service:
    services = list(plan.services)
    if member is not None:
        found = [s for s in services if member in (s.member, s.name, s.container_name)]
        if not found:
            known = ", ".join(s.member or s.name for s in services)
            raise EnvkitError(f"{member!r} is not one of this project's containers", f"use {known}")
        return found[0]
    if len(services) > 1:
        names = ", ".join(s.member or s.name for s in services)
        raise EnvkitError(
            "per-member mode: every member has a container of their own", f"name one: {names}"
        )
    return services[0]


def existing_container(client: Any, service: Service) -> Any:
    try:
        return client.containers.get(service.container_name)
    except NotFound:
        raise EnvkitError(
            f"{service.container_name} does not exist", "`envkit up` creates it"
        ) from None


def running_container(client: Any, service: Service) -> Any:
    container = existing_container(client, service)
    if container.status != "running":
        raise EnvkitError(
            f"{service.container_name} is {container.status}",
            f"`envkit start {service.member or ''}`".replace(" `", "`").strip()
            + " starts it (or `envkit up`)",
        )
    return container


def is_member(plan: Plan, word: str) -> bool:
    """Whether WORD names one of the project's containers (a member, or the shared one)."""
    return any(word in (s.member, s.name, s.container_name) for s in plan.services)
