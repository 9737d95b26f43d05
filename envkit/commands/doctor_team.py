"""Doctor's findings on a shared GPU server: each member's GPUs against the host's (the
assignment `envkit up` would make, or why it would refuse), and containers that hold GPU
memory while idle past the limit (team.idle_stop, else a day)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from envkit.commands.doctor_findings import Finding
from envkit.errors import EnvkitError

if TYPE_CHECKING:
    from envkit.commands.doctor_findings import Host
    from envkit.engine.gpu_use import GpuUse

IDLE_HOLD_S = 24 * 3600  # without team.idle_stop: a day idle while holding a GPU is worth a word


def check_member_gpus(host: Host) -> Finding:
    from envkit.commands.member_gpus import GpusUnknownError, host_gpus, resolve_gpus

    project = host.project
    assert project is not None
    remote = host.facts is not None and host.facts.remote
    if remote:
        return Finding("gpu assignment", "info", "not checked: the engine is on another machine")
    try:
        gpus = host_gpus()
        resolved = resolve_gpus(project, gpus)
    except GpusUnknownError as exc:
        return Finding(
            "gpu assignment",
            "warn",
            f"this host's GPUs cannot be listed ({exc})",
            "install the NVIDIA driver, or run doctor on the GPU server",
        )
    except EnvkitError as exc:
        return Finding("gpu assignment", "fail", exc.message, exc.fix)
    parts = []
    for service in resolved.plan.services:
        who = service.member or service.name
        ids = service.gpus if isinstance(service.gpus, tuple) else (str(service.gpus),)
        parts.append(f"{who}: {','.join(ids)}")
    names = ", ".join(f"{g.index} {g.name}" for g in gpus)
    return Finding("gpu assignment", "ok", f"{'; '.join(parts)} (host: {names})")


def _holders(host: Host, use: GpuUse, limit: float) -> list[str]:
    from envkit.engine.activity import activity
    from envkit.engine.client import containers

    assert host.plan is not None and host.client is not None
    held: dict[str, int] = {}
    for process in use.processes:
        if process.container_id:
            held[process.container_id] = held.get(process.container_id, 0) + process.used_bytes
    found = []
    for container in containers(host.client, host.plan.project):
        if container.id not in held or container.status != "running":
            continue
        seen = activity(container) or {}
        idle = seen.get("idle_s")
        if isinstance(idle, (int, float)) and idle >= limit:
            member = container.labels.get("io.envkit.member") or container.name
            found.append(f"{member} ({held[container.id] / 2**30:.1f} GiB, idle {idle:.0f} s)")
    return found


def check_idle_holders(host: Host) -> Finding:
    from envkit.engine.gpu_use import read_gpu_use

    assert host.plan is not None
    limit = host.plan.runtime.idle_stop_s or IDLE_HOLD_S
    use = read_gpu_use()
    if use.unavailable:
        return Finding("idle gpu holders", "info", f"GPU use not read: {use.unavailable}")
    found = _holders(host, use, limit)
    if not found:
        return Finding("idle gpu holders", "ok", f"no container holds a GPU idle {limit:.0f} s+")
    return Finding(
        "idle gpu holders",
        "warn",
        f"idle past {limit:.0f} s while holding GPU memory: {', '.join(found)}",
        "ask them to end their jobs, or `docker stop` the container (set team.idle_stop to "
        "have envkit stop idle containers)",
    )


def team_findings(host: Host) -> list[Finding]:
    """Only for a config that asks for particular GPUs or runs containers that may hold some."""
    from envkit.commands.member_gpus import wants_host_gpus

    if host.project is None or host.plan is None:
        return []
    findings = []
    if wants_host_gpus(host.project):
        findings.append(check_member_gpus(host))
    local = host.client is not None and not (host.facts is not None and host.facts.remote)
    if local and any(s.gpus != "none" for s in host.plan.services):
        findings.append(check_idle_holders(host))
    return findings
