"""--image IMAGE: a throwaway container, verified through docker exec, then removed."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from envkit.errors import EngineUnreachableError
from envkit.targets.docker import DockerTarget, docker_client

LABEL = "io.envkit.verify"


@contextmanager
def throwaway_container(
    image: str, *, gpus: bool, shm_size: str | None, run_id: str = "throwaway"
) -> Iterator[DockerTarget]:
    from docker.errors import ImageNotFound
    from docker.types import DeviceRequest

    client = docker_client()
    try:
        inspected = client.images.get(image)
    except ImageNotFound:
        raise EngineUnreachableError(
            f"image {image} is not on this engine", "build it first (`envkit build`) or pull it"
        ) from None
    labels = inspected.labels or {}
    kwargs: dict[str, Any] = {"detach": True, "labels": {LABEL: run_id}, "auto_remove": False}
    if "io.envkit.project" not in labels:
        # A plain image would run its default command and exit; keep it alive for exec instead.
        kwargs["entrypoint"] = ["sleep", "infinity"]
    if shm_size:
        kwargs["shm_size"] = shm_size
    if gpus:
        kwargs["device_requests"] = [DeviceRequest(count=-1, capabilities=[["gpu"]])]
    container = client.containers.run(image, **kwargs)
    try:
        yield DockerTarget(container.id, name=f"image://{image}", client=client)
    finally:
        container.remove(force=True)


def remove_throwaways(run_id: str) -> None:
    """Remove what a run left behind when it abandoned its throwaway container at a deadline."""
    with contextlib.suppress(Exception):  # best effort: the engine may be what hung
        client = docker_client(timeout=20)
        for container in client.containers.list(all=True, filters={"label": f"{LABEL}={run_id}"}):
            container.remove(force=True)
