"""image://IMAGE (and --image IMAGE): a throwaway container of the image, verified through
docker exec like docker:// and removed when the target is closed."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from envkit.engine.client import PROJECT_LABEL, docker_client, require_image
from envkit.targets.docker import DockerTarget

if TYPE_CHECKING:
    from envkit.targets.base import TargetOptions

LABEL = "io.envkit.verify"


NO_GPU_RUNTIME = "could not select device driver"
EMULATED = "runs under emulation"
# QEMU's user-mode emulation runs an arm64 torch's kernels many times slower than native (on the
# tests' x86 machine a CPU matmul search ran past its 60 s): the timeouts stretch, the checks stay.
EMULATION_SLOWDOWN = 10.0


class ImageTarget(DockerTarget):
    def __init__(self, image: str, name: str, options: TargetOptions) -> None:
        client = docker_client()
        self._notes: list[str] = []
        self._scale = 1.0
        super().__init__(_start(client, image, options, self._notes), name=name, client=client)
        if any(note.startswith(EMULATED) for note in self._notes):
            self._scale = EMULATION_SLOWDOWN

    @property
    def notes(self) -> list[str]:
        return self._notes

    @property
    def timeout_scale(self) -> float:
        return self._scale

    def close(self) -> None:
        with contextlib.suppress(Exception):  # best effort; remove_throwaways catches the rest
            self.container.remove(force=True)


def _start(client: Any, image: str, options: TargetOptions, notes: list[str]) -> str:
    from docker.errors import APIError
    from docker.types import DeviceRequest

    inspected = require_image(client, image, "build it first (`envkit build`) or pull it")
    labels = inspected.labels or {}
    kwargs: dict[str, Any] = {"detach": True, "labels": {LABEL: options.run_id}}
    if PROJECT_LABEL not in labels:
        # A plain image would run its default command and exit; keep it alive for exec instead.
        kwargs["entrypoint"] = ["sleep", "infinity"]
    if options.shm_size:
        kwargs["shm_size"] = options.shm_size
    from envkit.engine.emulation import emulated_platform
    from envkit.engine.facts import engine_facts, run_container

    facts = engine_facts(client)
    foreign = emulated_platform(facts.platform, str(inspected.attrs.get("Architecture") or ""))
    if foreign:
        notes.append(
            f"{EMULATED}: a {foreign} image on a {facts.platform} engine "
            f"(timeouts x{EMULATION_SLOWDOWN:g})"
        )
    if options.gpus:
        try:
            gpus = [DeviceRequest(count=-1, capabilities=[["gpu"]])]
            return str(run_container(client, image, {**kwargs, "device_requests": gpus}, facts).id)
        except APIError as exc:
            if NO_GPU_RUNTIME not in str(exc):
                raise
            # An engine without the NVIDIA runtime: the image is still worth verifying, and its
            # checks then say what is true (no driver: a fail where the spec asks for GPUs).
            _remove_run(client, options.run_id)
            notes.append("this engine has no GPU runtime: the container started without GPUs")
    return str(run_container(client, image, kwargs, facts).id)


def _remove_run(client: Any, run_id: str) -> None:
    for container in client.containers.list(all=True, filters={"label": f"{LABEL}={run_id}"}):
        container.remove(force=True)


def remove_throwaways(run_id: str) -> None:
    """Remove what a run left behind when it abandoned its throwaway container at a deadline."""
    with contextlib.suppress(Exception):  # best effort: the engine may be what hung
        _remove_run(docker_client(timeout=20), run_id)
