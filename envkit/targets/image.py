"""image://IMAGE (and --image IMAGE): a throwaway container of the image, verified through
docker exec like docker:// and removed when the target is closed."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from envkit.engine.client import PROJECT_LABEL, docker_client
from envkit.errors import EngineUnreachableError
from envkit.targets.docker import DockerTarget

if TYPE_CHECKING:
    from envkit.targets import TargetOptions

LABEL = "io.envkit.verify"


class ImageTarget(DockerTarget):
    def __init__(self, image: str, name: str, options: TargetOptions) -> None:
        client = docker_client()
        super().__init__(_start(client, image, options), name=name, client=client)

    def close(self) -> None:
        with contextlib.suppress(Exception):  # best effort; remove_throwaways catches the rest
            self.container.remove(force=True)


def _start(client: Any, image: str, options: TargetOptions) -> str:
    from docker.errors import ImageNotFound
    from docker.types import DeviceRequest

    try:
        inspected = client.images.get(image)
    except ImageNotFound:
        raise EngineUnreachableError(
            f"image {image} is not on this engine", "build it first (`envkit build`) or pull it"
        ) from None
    labels = inspected.labels or {}
    kwargs: dict[str, Any] = {"detach": True, "labels": {LABEL: options.run_id}}
    if PROJECT_LABEL not in labels:
        # A plain image would run its default command and exit; keep it alive for exec instead.
        kwargs["entrypoint"] = ["sleep", "infinity"]
    if options.shm_size:
        kwargs["shm_size"] = options.shm_size
    if options.gpus:
        kwargs["device_requests"] = [DeviceRequest(count=-1, capabilities=[["gpu"]])]
    return str(client.containers.run(image, **kwargs).id)


def remove_throwaways(run_id: str) -> None:
    """Remove what a run left behind when it abandoned its throwaway container at a deadline."""
    with contextlib.suppress(Exception):  # best effort: the engine may be what hung
        client = docker_client(timeout=20)
        for container in client.containers.list(all=True, filters={"label": f"{LABEL}={run_id}"}):
            container.remove(force=True)
