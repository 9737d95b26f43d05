"""What `envkit doctor` learns about the host, gathered once into a frozen record before any finding
is judged: the config, the engine and how it gives GPUs, Compose, buildx, the driver, free disk, the
project's containers and ports, the members' GPUs and who holds them idle. Every reading keeps what
went wrong with it (a `problem`), so a check can say why it could not look; nothing here judges."""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from docker.errors import APIError, DockerException

from envkit.catalog.compat import version_key
from envkit.config.load import config_given
from envkit.engine.activity import activity
from envkit.engine.builders import buildx_version
from envkit.engine.client import containers, docker_client, refused, running_containers
from envkit.engine.compose import taken_ports
from envkit.engine.emulation import Emulation, emulation
from envkit.engine.facts import EngineFacts, engine_facts
from envkit.engine.gpu_use import read_gpu_use
from envkit.engine.volumes import VolumeInfo, project_volumes
from envkit.errors import EnvkitError
from envkit.plan.models.plan import Plan
from envkit.platforms import PLATFORMS
from envkit.processes import quiet_output
from envkit.services.member_gpus import (
    GpusUnknownError,
    HostGpu,
    host_gpus,
    resolve_gpus,
    wants_host_gpus,
)
from envkit.services.project import Project, load_project


@dataclass(frozen=True)
class EngineReading:
    client: Any  # kept for nothing but the readings below; checks never call it
    version: dict[str, Any]
    info: dict[str, Any]
    facts: EngineFacts


@dataclass(frozen=True)
class MemberGpus:
    """The host's GPUs and the assignment `envkit up` would make, or why it cannot."""

    host: tuple[HostGpu, ...] = ()
    assigned: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (member, GPU ids)
    unknown: str | None = None  # the host's GPUs cannot be listed
    refused: EnvkitError | None = None  # `envkit up` would refuse this assignment


@dataclass(frozen=True)
class IdleHolders:
    limit_s: float
    holders: tuple[str, ...] = ()  # "alice (3.2 GiB, idle 90000 s)"
    unread: str | None = None  # GPU use could not be read


@dataclass(frozen=True)
class HostRecord:
    """Everything doctor's checks judge. None where a reading was not possible or not asked."""

    config_given: bool
    config_path: Path | None = None  # the envkit.yaml read
    plan: Plan | None = None  # its plan, where it is valid
    config_error: EnvkitError | None = None
    engine: EngineReading | None = None
    engine_error: EnvkitError | None = None
    compose: tuple[str, str] | None = None  # (v1 or v2, version)
    buildx: str | None = None
    smi: tuple[str, tuple[str, ...]] | None = None  # (driver, GPU names)
    disk_path: Path = field(default_factory=Path.cwd)
    disk_free_gb: float = 0.0
    built_image: tuple[str, float] | None = None  # (tag, GB) when the image is built
    running: frozenset[str] = frozenset()  # the project's running containers
    taken: tuple[object, ...] = ()  # host ports that cannot be published
    member_gpus: MemberGpus | None = None
    idle: IdleHolders | None = None
    departed_homes: tuple[VolumeInfo, ...] = ()  # homes of members no longer listed
    emulation: tuple[Emulation, ...] = ()  # each platform other than the engine's (local)


IDLE_HOLD_S = 24 * 3600  # without team.idle_stop: a day idle while holding a GPU is worth a word


def _config(config: str | None) -> tuple[Project | None, EnvkitError | None]:
    if not config_given(config):
        return None, None
    try:
        return load_project(config), None
    except EnvkitError as exc:
        return None, exc


def _engine() -> tuple[EngineReading | None, EnvkitError | None]:
    try:
        client = docker_client()
        try:
            version, info = client.version(), client.info()
        except APIError as exc:  # a proxy in front of the socket that forbids the call
            raise refused(exc) from None
        return EngineReading(client, version, info, engine_facts(client, version, info)), None
    except EnvkitError as exc:
        return None, exc


def compose_version() -> tuple[str, str] | None:
    for command, kind in (
        (["docker", "compose", "version", "--short"], "v2"),
        (["docker-compose", "version", "--short"], "v1"),
    ):
        version = (quiet_output(command, 30) or "").strip().lstrip("v")
        if version:
            return ("v2" if version_key(version) >= (2,) else kind), version
    return None


def nvidia_smi() -> tuple[str, tuple[str, ...]] | None:
    query = ["nvidia-smi", "--query-gpu=driver_version,name", "--format=csv,noheader"]
    out = quiet_output(query, 60)
    rows = [r.split(",", 1) for r in (out or "").strip().splitlines() if "," in r]
    if not rows:
        return None
    return rows[0][0].strip(), tuple(name.strip() for _, name in rows)


def _built_image(engine: EngineReading | None, plan: Plan | None) -> tuple[str, float] | None:
    if engine is None or plan is None:
        return None
    try:
        image = engine.client.images.get(plan.image.tag)
    except DockerException:
        return None
    return plan.image.tag, float(image.attrs.get("Size", 0)) / 1e9


def _member_gpus(project: Project, engine: EngineReading | None) -> MemberGpus | None:
    if not wants_host_gpus(project) or (engine is not None and engine.facts.remote):
        return None
    try:
        gpus = host_gpus()
        resolved = resolve_gpus(project, gpus)
    except GpusUnknownError as exc:
        return MemberGpus(unknown=str(exc))
    except EnvkitError as exc:
        return MemberGpus(refused=exc)
    assigned = tuple(
        (s.member or s.name, s.gpus if isinstance(s.gpus, tuple) else (str(s.gpus),))
        for s in resolved.plan.services
    )
    return MemberGpus(host=gpus, assigned=assigned)


def _idle_holders(plan: Plan, engine: EngineReading | None) -> IdleHolders | None:
    """Containers that hold GPU memory while idle past the limit (local engines only)."""
    if engine is None or engine.facts.remote or all(s.gpus == "none" for s in plan.services):
        return None
    limit = float(plan.runtime.idle_stop_s or IDLE_HOLD_S)
    use = read_gpu_use()
    if use.unavailable:
        return IdleHolders(limit, unread=use.unavailable)
    held: dict[str, int] = {}
    for process in use.processes:
        if process.container_id:
            held[process.container_id] = held.get(process.container_id, 0) + process.used_bytes
    found = []
    for container in containers(engine.client, plan.project):
        if container.id not in held or container.status != "running":
            continue
        idle = (activity(container) or {}).get("idle_s")
        if isinstance(idle, int | float) and idle >= limit:
            member = container.labels.get("io.envkit.member") or container.name
            found.append(f"{member} ({held[container.id] / 2**30:.1f} GiB, idle {idle:.0f} s)")
    return IdleHolders(limit, tuple(found))


def gather(config: str | None) -> HostRecord:
    """Read everything once; no reading changes the host or the engine."""
    project, config_error = _config(config)
    engine, engine_error = _engine()
    plan = project.plan if project is not None else None
    root = Path(str((engine.info if engine else {}).get("DockerRootDir") or "/var/lib/docker"))
    probe = root if root.exists() else Path.cwd()
    running: frozenset[str] = frozenset()
    taken: tuple[object, ...] = ()
    if plan is not None:
        running = frozenset(running_containers(engine.client, plan.project) if engine else ())
        taken = tuple(taken_ports(plan, set(running)))
    return HostRecord(
        config_given=config_given(config),
        config_path=project.config if project is not None else None,
        plan=plan,
        config_error=config_error,
        engine=engine,
        engine_error=engine_error,
        compose=compose_version(),
        buildx=buildx_version(),
        smi=nvidia_smi(),
        disk_path=probe,
        disk_free_gb=shutil.disk_usage(probe).free / 1e9,
        built_image=_built_image(engine, plan),
        running=running,
        taken=taken,
        member_gpus=_member_gpus(project, engine) if project is not None else None,
        idle=_idle_holders(plan, engine) if plan is not None else None,
        departed_homes=_departed_homes(plan, engine),
        emulation=_emulation(engine),
    )


def _emulation(engine: EngineReading | None) -> tuple[Emulation, ...]:
    """Whether this machine runs each other platform's programs: read only where the engine is
    this machine's (a remote engine's host is its own)."""
    if engine is None or engine.facts.remote:
        return ()
    return tuple(emulation(p) for p in PLATFORMS if p != engine.facts.platform)


def _departed_homes(plan: Plan | None, engine: EngineReading | None) -> tuple[VolumeInfo, ...]:
    if plan is None or engine is None:
        return ()
    members = {s.member or s.user for s in plan.services}
    homes = project_volumes(engine.client, plan.project, "home")
    return tuple(v for v in homes if v.member not in members)
