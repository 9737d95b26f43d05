"""Who uses the engine host's GPUs: NVML's compute processes (host PIDs), each mapped to the
container it runs in through its cgroup (/proc/PID/cgroup names the container's id under
Docker's and Podman's cgroup drivers, v1 and v2 alike), with each GPU's utilisation.

Read on this machine, so only for a local engine; a remote engine's GPUs are its host's to
read (`envkit status` says so)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

CONTAINER_ID = re.compile(r"(?<![0-9a-f])([0-9a-f]{64})(?![0-9a-f])")


@dataclass(frozen=True)
class GpuProcess:
    pid: int
    gpu: str  # device index
    used_bytes: int
    container_id: str | None  # the 64-hex id of the container it runs in, if any
    command: str


@dataclass
class GpuUse:
    gpus: dict[str, dict[str, object]] = field(default_factory=dict)  # index -> uuid, util, memory
    processes: list[GpuProcess] = field(default_factory=list)
    unavailable: str | None = None  # why nothing could be read


def container_of(pid: int, proc: Path = Path("/proc")) -> str | None:
    """The container id in the process's cgroup path, or None for a host process."""
    try:
        text = (proc / str(pid) / "cgroup").read_text()
    except OSError:
        return None
    found = CONTAINER_ID.findall(text)
    return found[-1] if found else None


def _command(pid: int, proc: Path = Path("/proc")) -> str:
    try:
        raw = (proc / str(pid) / "cmdline").read_bytes()
    except OSError:
        return ""
    return raw.replace(b"\0", b" ").decode("utf-8", "replace").strip()[:200]


def read_gpu_use() -> GpuUse:
    from envkit.checks.core.nvml import Nvml, NvmlError, Unavailable
    from envkit.checks.core.nvml_read import processes, utilization

    try:
        nvml = Nvml.open()
    except Unavailable as exc:
        return GpuUse(unavailable=str(exc))
    use = GpuUse()
    try:
        for index, handle in enumerate(nvml.handles):
            gpu = str(index)
            try:
                uuid = nvml.text("nvmlDeviceGetUUID", handle)
                held = processes(nvml, handle)
                busy = utilization(nvml, handle)
            except NvmlError as exc:
                use.gpus[gpu] = {"error": exc.name}
                continue
            use.gpus[gpu] = {"uuid": uuid, "utilization": busy}
            for process in held:
                pid = process["pid"]
                use.processes.append(
                    GpuProcess(pid, gpu, process["used_bytes"], container_of(pid), _command(pid))
                )
    finally:
        nvml.close()
    return use
