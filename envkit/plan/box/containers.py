"""Each container as data: what it publishes, mounts and is told, for every way it is started.

The compose file (docker-compose.yml.j2) and the SDK path (engine/sdk_up.py, Podman's create
call) read the same `ContainerSpec`, so a volume or a variable added here reaches every engine
alike; neither decides anything of its own beyond how its engine spells it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import posixpath
from dataclasses import dataclass, replace

from envkit.addresses import parse_mapping, with_port
from envkit.plan.box.access import Service
from envkit.plan.box.notebook import CONTAINER_PORT, TENSORBOARD_CONTAINER_PORT
from envkit.plan.models.plan import Plan

KEYS_IN_CONTAINER = "/run/envkit/keys"
HOSTKEYS_IN_CONTAINER = "/var/lib/envkit/hostkeys"
HEALTHCHECK = ("CMD", "/usr/local/bin/envkit-healthcheck")
CACHE_IN_CONTAINER = "/cache"
CACHE_VOLUME = "cache"  # compose's name; the engine's is PROJECT_cache
# Where the shared cache is pointed at (docs/team-onboarding.md): Hugging Face's hub and
# datasets, torch hub's checkpoints, and every XDG cache (pip's, uv's, ...).
CACHE_ENV = (
    ("HF_HOME", f"{CACHE_IN_CONTAINER}/huggingface"),
    ("TORCH_HOME", f"{CACHE_IN_CONTAINER}/torch"),
    ("XDG_CACHE_HOME", CACHE_IN_CONTAINER),
)
# What each volume envkit makes is, on its label: `envkit status`, `down --volumes`, `backup`
# and `member remove` find volumes by it, never by name alone.
VOLUME_LABEL = "io.envkit.volume"
MEMBER_LABEL = "io.envkit.member"


@dataclass(frozen=True)
class Published:
    """One published port. `compose` is the line as the compose file writes it."""

    address: str  # 0.0.0.0: every address, as Docker reads a mapping without one
    host_port: int
    container_port: str
    proto: str
    compose: str
    single: bool = False  # runtime.ports: one binding per container port (the SDK's tuple form)


@dataclass(frozen=True)
class Mount:
    source: str  # a named volume (compose's name; the engine prefixes the project) or a host path
    target: str
    mode: str  # rw, ro, or the mode runtime.volumes gives
    volume: bool  # a named volume the engine keeps, else a path on the engine's host
    keys: bool = False  # the rendered keys folder: a remote engine gets the keys copied in
    compose: str = ""


@dataclass(frozen=True)
class Setting:
    name: str
    value: str
    literal: bool  # compose must not interpolate it ($ doubled); False: "$HOME" is meant


@dataclass(frozen=True)
class GpuRequest:
    """compose's device reservation: a count ("all" or a number) or device ids."""

    count: str | None
    device_ids: tuple[str, ...]


@dataclass(frozen=True)
class NamedVolume:
    name: str  # compose's; the engine's is PROJECT_NAME
    labels: tuple[tuple[str, str], ...]

    def engine_name(self, project: str) -> str:
        return f"{project}_{self.name}"


@dataclass(frozen=True)
class ContainerSpec:
    service: Service
    build_network_host: bool
    image: str
    restart: str
    ipc_host: bool
    shm_size: str | None
    ports: tuple[Published, ...]
    environment: tuple[Setting, ...]
    mounts: tuple[Mount, ...]
    labels: tuple[tuple[str, str], ...]
    gpus: GpuRequest | None

    @property
    def name(self) -> str:
        return self.service.name


@dataclass(frozen=True)
class ContainersModel:
    """What docker-compose.yml.j2 lays out."""

    containers: tuple[ContainerSpec, ...]
    volumes: tuple[NamedVolume, ...]


def _ports(plan: Plan, service: Service) -> tuple[Published, ...]:
    ports = []
    if plan.ssh.enabled:
        for address in plan.ssh.bind:
            line = f"{with_port(address, service.ssh_port)}:22"
            ports.append(Published(address, service.ssh_port, "22", "tcp", line))
    for mapping in plan.runtime.ports:
        address, host_port, container_port, proto = parse_mapping(mapping)
        ports.append(Published(address, host_port, container_port, proto, mapping, single=True))
    if service.notebook_port is not None:
        notebook = (service.notebook_port, CONTAINER_PORT)
        tensorboard = (service.tensorboard_port, TENSORBOARD_CONTAINER_PORT)
        for address in plan.notebook.bind:
            for port, inside in (notebook, tensorboard):
                if port is not None:
                    line = f"{with_port(address, port)}:{inside}"
                    ports.append(Published(address, port, str(inside), "tcp", line))
    return tuple(ports)


def home_target(plan: Plan, service: Service) -> str | None:
    """Where the member's home volume is mounted: the login's home, unless a bind mount (the
    host's own home, the workspace) already puts something there."""
    home = plan.ssh.home or f"/home/{service.user}"
    if "$" in home:  # the invoking user's home, mounted from the host: it is kept there
        return None
    covered = [v.split(":")[1] for v in plan.runtime.volumes]
    if plan.workspace is not None:
        covered.append(plan.workspace.target)
    if any(home == t or home.startswith(t.rstrip("/") + "/") for t in covered):
        return None
    return home


def home_volume(project: str, service: Service) -> NamedVolume:
    labels = (
        ("io.envkit.project", project),
        (VOLUME_LABEL, "home"),
        (MEMBER_LABEL, service.member or service.user),
    )
    return NamedVolume(f"{service.name}-home", labels)


def _environment(plan: Plan, service: Service) -> tuple[Setting, ...]:
    settings = [
        Setting("ENVKIT_USER", service.user, True),
        Setting("ENVKIT_UID", str(service.uid), True),
        Setting("ENVKIT_GID", str(service.gid), True),
        Setting("ENVKIT_SUDO", "1" if plan.ssh.sudo else "0", True),
    ]
    if plan.runtime.idle_stop_s:
        settings.append(Setting("ENVKIT_IDLE_STOP", str(plan.runtime.idle_stop_s), True))
    if plan.ssh.home:  # "$HOME" is meant to be expanded, like the volume's
        settings.append(Setting("ENVKIT_HOME", plan.ssh.home, False))
    if home_target(plan, service) is not None:  # seeded from /etc/skel once, when empty
        settings.append(Setting("ENVKIT_HOME_VOLUME", "1", True))
    own = dict(plan.runtime.env)
    cache = [(k, v) for k, v in CACHE_ENV if k not in own] if plan.runtime.shared_cache else []
    if plan.runtime.shared_cache:
        settings.append(Setting("ENVKIT_CACHE", CACHE_IN_CONTAINER, True))
    names = [k for k, _ in cache] + [k for k, _ in plan.runtime.env]
    settings.append(Setting("ENVKIT_ENV_KEYS", " ".join(names), True))
    settings += [Setting(key, value, True) for key, value in (*cache, *plan.runtime.env)]
    return tuple(settings)


def _host_path(plan: Plan, path: str, to_project: str) -> tuple[str, str]:
    """(the engine's path, compose's spelling) of a host path: relative ones are envkit.yaml's
    folder's (compose would read them from the build context's)."""
    if path.startswith(("/", "$", "~")):
        return path, path
    return (
        posixpath.normpath(posixpath.join(plan.project_dir, path)),
        posixpath.normpath(posixpath.join(to_project, path)),
    )


def _mount(
    source: str, target: str, mode: str = "rw", spelled: str = "", volume: bool = False
) -> Mount:
    """A mount and compose's line for it: SOURCE (as compose SPELLS it):TARGET[:MODE but rw]."""
    line = f"{spelled or source}:{target}" + ("" if mode == "rw" else f":{mode}")
    return Mount(source, target, mode, volume, compose=line)


def _mounts(plan: Plan, service: Service, to_project: str) -> tuple[Mount, ...]:
    mounts = [
        # A folder, not the file: `envkit up` rewrites the file by rename, and a file bind
        # mount would keep showing the old one.
        replace(_mount(f"./{service.keys_dir}", KEYS_IN_CONTAINER, "ro"), keys=True),
        _mount(f"{service.name}-hostkeys", HOSTKEYS_IN_CONTAINER, volume=True),
    ]
    home = home_target(plan, service)
    if home is not None:
        mounts.append(_mount(home_volume(plan.project, service).name, home, volume=True))
    workspace = plan.workspace
    if workspace is not None:
        source = workspace.source if workspace.within_project is None else workspace.within_project
        host, spelled = _host_path(plan, source, to_project)
        mounts.append(_mount(host, workspace.target, spelled=spelled))
    if plan.runtime.shared_cache:
        mounts.append(_mount(CACHE_VOLUME, CACHE_IN_CONTAINER, volume=True))
    for volume in plan.runtime.volumes:
        parts = volume.split(":")
        mode = parts[2] if len(parts) > 2 else "rw"
        host, spelled = _host_path(plan, parts[0], to_project)
        line = ":".join([spelled, *parts[1:]])
        mounts.append(Mount(host, parts[1], mode, volume=False, compose=line))
    return tuple(mounts)


def _gpus(gpus: str | int | tuple[str, ...]) -> GpuRequest | None:
    if gpus == "none":
        return None
    if isinstance(gpus, str):
        return GpuRequest("all", ())
    return GpuRequest(str(gpus), ()) if isinstance(gpus, int) else GpuRequest(None, gpus)


SPEC_LABEL = "io.envkit.spec"  # a digest of the container's spec: changed, `up` recreates it


def spec_digest(spec: ContainerSpec) -> str:
    """What the container is asked to be, as a digest (the engine's own paths left out, so the
    same config gives the same digest on every machine)."""
    shape = dataclasses.asdict(spec)
    shape["mounts"] = [(m.compose or m.target, m.mode, m.volume) for m in spec.mounts]
    shape["service"].pop("keys")  # installed in place when they change: no recreate
    text = json.dumps(shape, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def container_spec(plan: Plan, service: Service, to_project: str = "..") -> ContainerSpec:
    """TO_PROJECT: envkit.yaml's folder seen from the build context (compose's own folder)."""
    labels = (*plan.image.labels, ("io.envkit.service", service.name))
    if service.member:
        labels += ((MEMBER_LABEL, service.member),)
    runtime = plan.runtime
    spec = ContainerSpec(
        service=service,
        build_network_host=runtime.build_network == "host",
        image=plan.image.tag,
        restart=runtime.restart,
        ipc_host=runtime.ipc_host,
        shm_size=runtime.shm_size,
        ports=_ports(plan, service),
        environment=_environment(plan, service),
        mounts=_mounts(plan, service, to_project),
        labels=labels,
        gpus=_gpus(service.gpus),
    )
    return dataclasses.replace(spec, labels=(*spec.labels, (SPEC_LABEL, spec_digest(spec))))


def named_volumes(plan: Plan) -> tuple[NamedVolume, ...]:
    """Every volume the project's containers use, as `up` creates them: host keys and homes
    per container, and the shared cache."""
    project = (("io.envkit.project", plan.project),)
    found = [
        NamedVolume(f"{s.name}-hostkeys", (*project, (VOLUME_LABEL, "hostkeys")))
        for s in plan.services
    ]
    found += [home_volume(plan.project, s) for s in plan.services if home_target(plan, s)]
    if plan.runtime.shared_cache:
        found.append(NamedVolume(CACHE_VOLUME, (*project, (VOLUME_LABEL, "cache"))))
    return tuple(found)


def containers_model(plan: Plan, to_project: str = "..") -> ContainersModel:
    return ContainersModel(
        containers=tuple(container_spec(plan, s, to_project) for s in plan.services),
        volumes=named_volumes(plan),
    )
