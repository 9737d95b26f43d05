"""Each container as data: what it publishes, mounts and is told, for every way it is started.

The compose file (docker-compose.yml.j2) and the SDK path (engine/sdk_up.py, Podman's create
call) read the same `ContainerSpec`, so a volume or a variable added here reaches every engine
alike; neither decides anything of its own beyond how its engine spells it.
"""

from __future__ import annotations

from dataclasses import dataclass

from envkit.addresses import parse_mapping, with_port
from envkit.plan.access import Service
from envkit.plan.model import Plan
from envkit.plan.notebook import CONTAINER_PORT, TENSORBOARD_CONTAINER_PORT

KEYS_IN_CONTAINER = "/run/envkit/keys"
HOSTKEYS_IN_CONTAINER = "/var/lib/envkit/hostkeys"
HEALTHCHECK = ("CMD", "/usr/local/bin/envkit-healthcheck")


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
        for address in plan.notebook.bind:
            line = f"{with_port(address, service.notebook_port)}:{CONTAINER_PORT}"
            ports.append(
                Published(address, service.notebook_port, str(CONTAINER_PORT), "tcp", line)
            )
            if service.tensorboard_port is not None:
                port = service.tensorboard_port
                line = f"{with_port(address, port)}:{TENSORBOARD_CONTAINER_PORT}"
                ports.append(Published(address, port, str(TENSORBOARD_CONTAINER_PORT), "tcp", line))
    return tuple(ports)


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
    settings.append(Setting("ENVKIT_ENV_KEYS", " ".join(k for k, _ in plan.runtime.env), True))
    settings += [Setting(key, value, True) for key, value in plan.runtime.env]
    return tuple(settings)


def _mounts(plan: Plan, service: Service) -> tuple[Mount, ...]:
    hostkeys = f"{service.name}-hostkeys"
    mounts = [
        # A folder, not the file: `envkit up` rewrites the file by rename, and a file bind
        # mount would keep showing the old one.
        Mount(
            f"./{service.keys_dir}",
            KEYS_IN_CONTAINER,
            "ro",
            volume=False,
            keys=True,
            compose=f"./{service.keys_dir}:{KEYS_IN_CONTAINER}:ro",
        ),
        Mount(
            hostkeys,
            HOSTKEYS_IN_CONTAINER,
            "rw",
            volume=True,
            compose=f"{hostkeys}:{HOSTKEYS_IN_CONTAINER}",
        ),
    ]
    for volume in plan.runtime.volumes:
        parts = volume.split(":")
        mode = parts[2] if len(parts) > 2 else "rw"
        mounts.append(Mount(parts[0], parts[1], mode, volume=False, compose=volume))
    return tuple(mounts)


def _gpus(gpus: str | int | tuple[str, ...]) -> GpuRequest | None:
    if gpus == "none":
        return None
    if isinstance(gpus, str):
        return GpuRequest("all", ())
    if isinstance(gpus, int):
        return GpuRequest(str(gpus), ())
    return GpuRequest(None, gpus)


def container_spec(plan: Plan, service: Service) -> ContainerSpec:
    labels = (*plan.image.labels, ("io.envkit.service", service.name))
    if service.member:
        labels += (("io.envkit.member", service.member),)
    runtime = plan.runtime
    return ContainerSpec(
        service=service,
        build_network_host=runtime.build_network == "host",
        image=plan.image.tag,
        restart=runtime.restart,
        ipc_host=runtime.ipc_host,
        shm_size=runtime.shm_size,
        ports=_ports(plan, service),
        environment=_environment(plan, service),
        mounts=_mounts(plan, service),
        labels=labels,
        gpus=_gpus(service.gpus),
    )


def containers_model(plan: Plan) -> ContainersModel:
    project = (("io.envkit.project", plan.project),)
    return ContainersModel(
        containers=tuple(container_spec(plan, service) for service in plan.services),
        volumes=tuple(NamedVolume(f"{s.name}-hostkeys", project) for s in plan.services),
    )
