"""The one way envkit reaches the Docker engine: a client with a deadline on every call, and the
labels that say which containers and volumes are envkit's."""

from __future__ import annotations

import os
from typing import Any

ENGINE_CALL_TIMEOUT_S = 60.0  # any engine call but a verify suite's own exec

PROJECT_LABEL = "io.envkit.project"
SERVICE_LABEL = "io.envkit.service"  # set only by `envkit up`, never by the image


def docker_client(timeout: float = ENGINE_CALL_TIMEOUT_S) -> Any:
    import docker  # imported here: only commands that talk to the engine pay for it
    from docker.errors import DockerException

    from envkit.errors import EngineUnreachableError

    try:
        client = docker.from_env(timeout=int(timeout))
        client.ping()
    except DockerException as exc:
        where = os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
        raise EngineUnreachableError(
            f"the Docker engine at {where} does not answer ({exc.__class__.__name__})",
            "start it (`sudo systemctl start docker`), or point DOCKER_HOST at a running engine",
        ) from None
    return client


def require_image(client: Any, name: str, fix: str, what: str = "image") -> Any:
    """The engine's image `name`, or the one error envkit gives for a missing image."""
    from docker.errors import ImageNotFound

    from envkit.errors import ImageMissingError

    try:
        return client.images.get(name)
    except ImageNotFound:
        raise ImageMissingError(f"{what} {name} is not on this engine", fix) from None


def ours(project: str) -> dict[str, list[str]]:
    """Containers `envkit up` made for this project. The image carries io.envkit.project too, so
    a container someone ran by hand from it has that label; only ours have io.envkit.service."""
    return {"label": [f"{PROJECT_LABEL}={project}", SERVICE_LABEL]}


def project_volumes(project: str) -> dict[str, list[str]]:
    return {"label": [f"{PROJECT_LABEL}={project}"]}


def containers(client: Any, project: str) -> list[Any]:
    """Every container `envkit up` made for the project, stopped ones included."""
    return list(client.containers.list(all=True, filters=ours(project)))


def running_containers(client: Any, project: str) -> set[str]:
    return {c.name for c in client.containers.list(filters=ours(project))}
