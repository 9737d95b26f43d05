"""The engine host's GPUs, read through NVML on this machine, and the members' GPU requests made
concrete against them: every named id checked (an id the host lacks stops `envkit up` before
anything starts), and every count turned into free device ids.

Counts take the lowest-numbered GPUs that no member names and no earlier member's count took, in
the order of team.members: the same config on the same host always gives the same ids."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from envkit.errors import EnvkitError

if TYPE_CHECKING:
    from envkit.plan.box.access import Service
    from envkit.services.project import Project


@dataclass(frozen=True)
class HostGpu:
    index: str  # as docker's device_ids and CUDA_VISIBLE_DEVICES write it
    uuid: str
    name: str


class GpusUnknownError(Exception):
    """This machine cannot list the engine's GPUs; the message says why."""


def host_gpus() -> tuple[HostGpu, ...]:
    """The GPUs NVML lists here (the library the NVIDIA driver installs on the host)."""
    from envkit.checks.core.nvml import Nvml, NvmlError, Unavailable

    try:
        nvml = Nvml.open()
    except Unavailable as exc:
        raise GpusUnknownError(str(exc)) from None
    try:
        found = []
        for index, handle in enumerate(nvml.handles):
            try:
                uuid = nvml.text("nvmlDeviceGetUUID", handle)
                name = nvml.text("nvmlDeviceGetName", handle)
            except NvmlError:
                uuid, name = "", "unreadable"
            found.append(HostGpu(str(index), uuid, name))
        return tuple(found)
    finally:
        nvml.close()


def wants_host_gpus(project: Project) -> bool:
    """Whether any container asks for particular GPUs (ids or a per-member count)."""
    return any(isinstance(s.gpus, (tuple, int)) for s in project.plan.services)


def _field(project: Project, service: Service) -> tuple[str | int, ...]:
    if service.member is not None:
        index = project.plan.members.index(service.member)
        if project.loaded.spec.team.members[index].gpus is not None:
            return ("team", "members", index, "gpus")
    return ("runtime", "gpus")


def _missing(project: Project, service: Service, gpu: str, gpus: tuple[HostGpu, ...]) -> None:
    from envkit.errors import ConfigError

    have = ", ".join(g.index for g in gpus) or "none"
    raise ConfigError(
        str(project.config),
        [
            project.loaded.issue(
                _field(project, service),
                f"GPU {gpu} ({service.member or 'the shared container'}) is not on this host: "
                f"its GPUs are {have}",
                "name GPUs the host has (`nvidia-smi -L` lists indices and UUIDs)",
                list(service.gpus) if isinstance(service.gpus, tuple) else service.gpus,
            )
        ],
    )


def resolve_gpus(project: Project, gpus: tuple[HostGpu, ...]) -> Project:
    """The project with every GPU id checked against `gpus` and every count made ids."""
    by_id = {g.index: g for g in gpus} | {g.uuid: g for g in gpus if g.uuid}
    named: set[str] = set()
    for service in project.plan.services:
        if isinstance(service.gpus, tuple):
            for gpu in service.gpus:
                if gpu not in by_id:
                    _missing(project, service, gpu, gpus)
                named.add(by_id[gpu].index)
    free = [g.index for g in gpus if g.index not in named]
    services = []
    for service in project.plan.services:
        if isinstance(service.gpus, int) and service.member is not None:
            if len(free) < service.gpus:
                raise EnvkitError(
                    f"member {service.member} asks for {service.gpus} GPU(s); "
                    f"{len(free)} of this host's {len(gpus)} are not given to anyone",
                    "lower the count, or free GPUs named by other members (team.members[].gpus)",
                )
            count = service.gpus
            service = replace(service, gpus=tuple(free[:count]))
            del free[:count]
        services.append(service)
    return replace(project, plan=replace(project.plan, services=tuple(services)))


def with_host_gpus(project: Project, remote: bool) -> tuple[Project, str | None]:
    """`envkit up`'s step: (the project with concrete GPUs, a note when they went unchecked)."""
    if not wants_host_gpus(project):
        return project, None
    counts = [s for s in project.plan.services if isinstance(s.gpus, int) and s.member]
    why = "the engine is on another machine" if remote else ""
    try:
        if not remote:
            return resolve_gpus(project, host_gpus()), None
    except GpusUnknownError as exc:
        why = str(exc)
    if counts:
        raise EnvkitError(
            f"member {counts[0].member} asks for a GPU count, and this machine cannot list the "
            f"engine's GPUs ({why})",
            "name the member's GPUs as device ids or GPU-UUIDs (team.members[].gpus), or run "
            "envkit on the GPU server itself",
        )
    return project, f"GPU ids not checked against the host: {why}"
