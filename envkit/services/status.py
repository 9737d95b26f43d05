"""What `envkit status` and `envkit metrics` report of a project's containers: each one's state,
health, ports, GPUs and their use, SSH sessions, notebook kernels and idle time; and the GPU
processes of the engine's host that run in no container of the project."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from envkit.addresses import with_port
from envkit.engine.client import containers, docker_client
from envkit.engine.compose import health_of
from envkit.engine.endpoint import current_endpoint
from envkit.engine.facts import CDI_GPU_KIND
from envkit.engine.gpu_use import read_gpu_use
from envkit.engine.volumes import project_volumes
from envkit.services.project import load_project

if TYPE_CHECKING:
    from envkit.engine.gpu_use import GpuUse
    from envkit.plan import Plan
    from envkit.plan.box.access import Service


def _ports(container: Any) -> list[str]:
    return [
        f"{with_port(binding['HostIp'], binding['HostPort'])}->{port}"
        for port, bindings in (container.ports or {}).items()
        # IPv4 first, whatever order the engine lists them in
        for binding in sorted(bindings or (), key=lambda b: (":" in b["HostIp"], b["HostIp"]))
    ]


def assigned_gpus(container: Any, service: Service) -> list[str] | str:
    """What the engine was asked for: device ids, "all", a count, or the CDI names."""
    host = container.attrs.get("HostConfig") or {}
    for request in host.get("DeviceRequests") or ():
        if request.get("DeviceIDs"):
            return [str(d).removeprefix(f"{CDI_GPU_KIND}=") for d in request["DeviceIDs"]]
        if request.get("Count") == -1:
            return "all"
        if request.get("Count"):
            return str(request["Count"])
    if cdi := [str(d) for d in host.get("Devices") or () if CDI_GPU_KIND in str(d)]:
        return cdi
    return "none" if service.gpus == "none" else []


def _gpu_use(container: Any, use: GpuUse) -> list[dict[str, Any]]:
    mine = [p for p in use.processes if p.container_id == container.id]
    by_gpu: dict[str, dict[str, Any]] = {}
    for process in mine:
        gpu = by_gpu.setdefault(
            process.gpu,
            {"gpu": process.gpu, "memory_used_bytes": 0, "processes": 0, **use.gpus[process.gpu]},
        )
        gpu["memory_used_bytes"] += process.used_bytes
        gpu["processes"] += 1
    return sorted(by_gpu.values(), key=lambda g: int(g["gpu"]))


def _when(epoch: float | None) -> str | None:
    if epoch is None:
        return None
    return datetime.fromtimestamp(epoch, timezone.utc).isoformat(timespec="seconds")


def describe(container: Any | None, service: Service, use: GpuUse | None) -> dict[str, Any]:
    """One container's entry, the same for the table and --json."""
    from envkit.engine.activity import activity

    entry: dict[str, Any] = {
        "member": service.member,
        "container": service.container_name,
        "state": "not created",
    }
    if container is None:
        return entry
    state = container.attrs.get("State") or {}
    seen = activity(container)
    entry |= {
        "state": container.status,
        "health": health_of(container),
        "exit_code": state.get("ExitCode") if container.status == "exited" else None,
        "ports": _ports(container),
        # The image id shows at a glance that every member runs the same (verified) image.
        "image": str(container.attrs.get("Image", "")).removeprefix("sha256:")[:12],
        "gpus": assigned_gpus(container, service),
        "gpu_use": _gpu_use(container, use) if use is not None and not use.unavailable else None,
        "sessions": None if seen is None else seen.get("sessions"),
        "kernels": None if seen is None else seen.get("kernels"),
        "busy_kernels": None if seen is None else seen.get("busy_kernels"),
        "last_activity": None if seen is None else _when(seen.get("last_active")),
        "idle_s": None if seen is None else seen.get("idle_s"),
        "stopped_idle": "stopped_idle" in (seen or ()) and container.status != "running",
    }
    return entry


def _others(use: GpuUse | None, ids: set[str]) -> list[dict[str, Any]]:
    if use is None:
        return []
    return [
        {
            "pid": p.pid,
            "gpu": p.gpu,
            "memory_used_bytes": p.used_bytes,
            "container_id": p.container_id[:12] if p.container_id else None,
            "command": p.command,
        }
        for p in use.processes
        if p.container_id not in ids
    ]


def collect(config: str | None, volumes: bool = True) -> dict[str, Any]:
    """The report; VOLUMES: also each volume's size (the engine's disk usage, the slow part,
    which `envkit metrics` does not export)."""
    plan = load_project(config).plan
    client = docker_client()
    found = {c.name: c for c in containers(client, plan.project)}
    use = None if current_endpoint().remote else read_gpu_use()
    # One exec per running container, each half a second (a kernel's CPU use is a difference
    # between two looks): side by side, a team of twenty answers as fast as one member.
    with ThreadPoolExecutor(max_workers=8) as pool:
        entries = list(
            pool.map(lambda s: describe(found.get(s.container_name), s, use), plan.services)
        )
    return {
        "project": plan.project,
        "idle_stop_s": plan.runtime.idle_stop_s,
        "containers": entries,
        "gpus_read": "the engine is on another machine"
        if use is None
        else use.unavailable or "nvml",
        "host_gpus": len(use.gpus) if use is not None and not use.unavailable else None,
        "other_gpu_processes": _others(use, {c.id for c in found.values()}),
        "volumes": _volumes(client, plan) if volumes else [],
    }


def _volumes(client: Any, plan: Plan) -> list[dict[str, Any]]:
    """Every volume of the project, with whose it is and its size; a home whose member has
    left team.members is marked: it stays until `envkit member remove NAME --delete-home`."""
    members = {s.member or s.user for s in plan.services}
    return [
        {
            "name": v.name,
            "kind": v.kind,
            "member": v.member,
            "size_bytes": v.size,
            "departed": v.kind == "home" and v.member not in members,
        }
        for v in project_volumes(client, plan.project)
    ]
