"""Start the environment through the docker SDK with the compose file's options, for machines
without `docker compose` or `docker-compose` (or with ENVKIT_COMPOSE=sdk)."""

from __future__ import annotations

import io
import os
import tarfile
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from envkit.addresses import parse_mapping
from envkit.engine.facts import CDI_GPU_KIND, EngineFacts, run_container
from envkit.errors import EnvkitError
from envkit.plan.notebook import notebook_publications

if TYPE_CHECKING:
    from envkit.plan import Plan
    from envkit.plan.access import Service

SECOND_NS = 1_000_000_000


KEYS_IN_CONTAINER = "/run/envkit/keys"


def _volumes(
    plan: Plan, service: Service, out_dir: Path, remote: bool
) -> dict[str, dict[str, str]]:
    binds = {
        f"{plan.project}_{service.name}-hostkeys": {
            "bind": "/var/lib/envkit/hostkeys",
            "mode": "rw",
        },
    }
    if not remote:  # a remote engine gets the keys copied in (copy_keys): no path here is there
        binds[str(out_dir / service.keys_dir)] = {"bind": KEYS_IN_CONTAINER, "mode": "ro"}
    for volume in plan.runtime.volumes:
        if remote:
            _refuse_client_paths(volume)
        parts = os.path.expandvars(volume).split(":")
        host, container = str(Path(parts[0]).expanduser()), parts[1]
        mode = parts[2] if len(parts) > 2 else "rw"
        if not host.startswith("/"):  # compose resolves relative paths from its file's folder
            host = str((out_dir / host).resolve())
        binds[host] = {"bind": container, "mode": mode}
    return binds


def _refuse_client_paths(volume: str) -> None:
    """On a remote engine a volume's host path is the engine's machine's: a relative path or a
    variable would be resolved here, on the wrong machine, and Docker would make an empty
    folder there in its place."""
    host = volume.split(":")[0]
    if "$" in host or "~" in host or not host.startswith("/"):
        raise EnvkitError(
            f"runtime.volumes {volume!r}: the engine is on another machine, where this "
            "machine's relative paths, ~ and $VARIABLES mean nothing",
            "write the engine machine's absolute path (e.g. /data/datasets:/data), or run "
            "envkit on that machine",
        )


def copy_keys(container: Any, service: Service, out_dir: Path) -> None:
    """The member keys of SERVICE into its container, through the engine (a remote engine
    cannot see this machine's files): root-owned, and read-only to everyone else."""
    keys = (out_dir / service.keys_dir / "authorized_keys").read_bytes()
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for folder in ("run/envkit", KEYS_IN_CONTAINER.lstrip("/")):
            entry = tarfile.TarInfo(folder)
            entry.type, entry.mode = tarfile.DIRTYPE, 0o755
            archive.addfile(entry)
        entry = tarfile.TarInfo(KEYS_IN_CONTAINER.lstrip("/") + "/authorized_keys")
        entry.size, entry.mode = len(keys), 0o644
        archive.addfile(entry, io.BytesIO(keys))
    if not container.put_archive("/", buffer.getvalue()):
        raise EnvkitError(
            f"could not copy the keys into {container.name}",
            "see `docker logs` of the container and the engine's log",
        )


def _ports(plan: Plan, service: Service) -> dict[str, Any]:
    ports: dict[str, Any] = {}
    if plan.ssh.enabled:
        # One binding per address: docker-py takes a list of (address, port) for a port.
        ports["22/tcp"] = [(address, service.ssh_port) for address in plan.ssh.bind]
    for mapping in plan.runtime.ports:
        host_ip, host_port, container_port, proto = parse_mapping(mapping)
        ports[f"{container_port}/{proto}"] = (host_ip, host_port)
    for published in notebook_publications(plan.notebook, service):
        binding = (published.address, published.host_port)
        ports.setdefault(f"{published.container_port}/tcp", []).append(binding)
    return ports


def cdi_names(gpus: str | int | tuple[str, ...]) -> list[str]:
    """runtime.gpus as CDI device names: all, the first N, or the ones named."""
    if gpus == "all":
        return [f"{CDI_GPU_KIND}=all"]
    if isinstance(gpus, int):
        return [f"{CDI_GPU_KIND}={index}" for index in range(gpus)]
    return [f"{CDI_GPU_KIND}={device}" for device in gpus]


def _gpus(service: Service, facts: EngineFacts | None) -> dict[str, Any]:
    """The create call's GPU options, as this engine gives GPUs: Docker's NVIDIA runtime
    (driver nvidia), Docker's CDI (driver cdi, Docker 25+), or Podman's CDI device names."""
    from docker.types import DeviceRequest

    gpus = service.gpus
    if facts is not None and facts.podman:
        # Podman's own create call: its compatible one cannot name CDI devices (engine/podman.py)
        if gpus == "none":
            return {"cdi_devices": []}
        if facts.gpu_path != "cdi" and not facts.remote:  # a remote host's specs: Podman judges
            raise EnvkitError(
                f"runtime.gpus is {gpus!r}, and Podman gives GPUs only through CDI, but no CDI "
                "spec on this host names an nvidia.com/gpu device",
                "generate one: `sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml`; "
                "or set runtime.gpus: none",
            )
        return {"cdi_devices": cdi_names(gpus)}
    if gpus == "none":
        return {}
    if facts is not None and facts.gpu_path == "cdi":
        return {"device_requests": [DeviceRequest(driver="cdi", device_ids=cdi_names(gpus))]}
    if gpus == "all":
        request = DeviceRequest(driver="nvidia", count=-1, capabilities=[["gpu"]])
    elif isinstance(gpus, int):
        request = DeviceRequest(driver="nvidia", count=gpus, capabilities=[["gpu"]])
    else:
        request = DeviceRequest(driver="nvidia", device_ids=list(gpus), capabilities=[["gpu"]])
    return {"device_requests": [request]}


def run_options(
    plan: Plan, service: Service, out_dir: Path, facts: EngineFacts | None = None
) -> dict[str, Any]:
    remote = facts is not None and facts.remote
    environment = {
        "ENVKIT_USER": service.user,
        "ENVKIT_UID": str(service.uid),
        "ENVKIT_GID": str(service.gid),
        "ENVKIT_SUDO": "1" if plan.ssh.sudo else "0",
        "ENVKIT_ENV_KEYS": " ".join(k for k, _ in plan.runtime.env),
        **dict(plan.runtime.env),
    }
    if plan.runtime.idle_stop_s:
        environment["ENVKIT_IDLE_STOP"] = str(plan.runtime.idle_stop_s)
    if plan.ssh.home:  # "$HOME" as compose would expand it
        if remote and "$" in plan.ssh.home:
            raise EnvkitError(
                f"ssh.home {plan.ssh.home!r}: the engine is on another machine, where this "
                "machine's variables mean nothing",
                "write the engine machine's absolute path, e.g. /home/alice",
            )
        environment["ENVKIT_HOME"] = os.path.expandvars(plan.ssh.home)
    labels = {**dict(plan.image.labels), "io.envkit.service": service.name}
    if service.member:
        labels["io.envkit.member"] = service.member
    options: dict[str, Any] = {
        "name": service.container_name,
        "hostname": service.container_name,
        "detach": True,
        "init": True,
        "environment": environment,
        "labels": labels,
        "volumes": _volumes(plan, service, out_dir, remote),
        "ports": _ports(plan, service),
        "restart_policy": {"Name": "" if plan.runtime.restart == "no" else plan.runtime.restart},
        "healthcheck": {
            "test": ["CMD", "/usr/local/bin/envkit-healthcheck"],
            "interval": 10 * SECOND_NS,
            "timeout": 5 * SECOND_NS,
            "retries": 3,
            "start_period": 20 * SECOND_NS,
        },
        **_gpus(service, facts),
    }
    if service.cpus:
        options["nano_cpus"] = int(service.cpus * 1e9)
    if service.memory:
        options["mem_limit"] = service.memory
    if plan.runtime.ipc_host:
        options["ipc_mode"] = "host"
    else:
        options["shm_size"] = plan.runtime.shm_size
    return options


def sdk_up(client: Any, plan: Plan, out_dir: Path, facts: EngineFacts) -> None:
    from docker.errors import APIError, NotFound

    remote = facts.remote
    for service in plan.services:
        try:
            existing = client.containers.get(service.container_name)
        except NotFound:
            existing = None
        if existing is not None and existing.status == "running":
            continue  # already up: `up` twice changes nothing
        if existing is not None:
            existing.remove(force=True)
        volume = f"{plan.project}_{service.name}-hostkeys"
        try:
            client.volumes.get(volume)
        except NotFound:
            client.volumes.create(volume, labels={"io.envkit.project": plan.project})
        options = run_options(plan, service, out_dir.resolve(), facts)
        # A remote engine's container gets its keys copied in between create and its first
        # start, where the entrypoint reads them.
        prepare = partial(copy_keys, service=service, out_dir=out_dir) if remote else None
        try:
            run_container(client, plan.image.tag, options, facts, prepare)
        except APIError as exc:
            raise start_failed(service.container_name, exc) from None


def start_failed(name: str, exc: Exception) -> EnvkitError:
    """The engine refused to create or start a container: its reason, and the fix for the
    reasons engines give most."""
    said = " ".join(str(getattr(exc, "explanation", None) or exc).split())[:400]
    lower = said.lower()
    if "catatonit" in lower or "container-init" in lower:
        fix = "install Podman's init (`apt install catatonit`): envkit starts containers with init"
    elif "rlimit" in lower:
        fix = (
            "the engine asked for process limits above this host's (`ulimit -Hn`, `ulimit -Hu`): "
            "raise the host's hard limits, or lower the engine's defaults"
        )
    elif "address already in use" in lower or "port is already allocated" in lower:
        fix = "a published port is taken on the engine's host: pick another port in envkit.yaml"
    elif "cdi" in lower or "nvidia.com/gpu" in lower:
        fix = "the CDI spec does not name that device: `nvidia-ctk cdi list` shows the names"
    else:
        fix = "see the engine's message above; `envkit doctor` checks the engine"
    return EnvkitError(f"the engine could not start {name}: {said}", fix)
