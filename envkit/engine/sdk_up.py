"""Start the environment through the docker SDK with the compose file's options, for machines
without `docker compose` or `docker-compose` (or with ENVKIT_COMPOSE=sdk)."""

from __future__ import annotations

import io
import os
import tarfile
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from envkit.engine.facts import CDI_GPU_KIND, EngineFacts, run_container
from envkit.errors import EnvkitError
from envkit.plan.box.containers import (
    HEALTHCHECK,
    KEYS_IN_CONTAINER,
    ContainerSpec,
    Mount,
    container_spec,
    named_volumes,
)

if TYPE_CHECKING:
    from envkit.engine.lifecycle import UpPlan
    from envkit.plan import Plan
    from envkit.plan.box.access import Service

SECOND_NS = 1_000_000_000


def _volumes(
    plan: Plan, spec: ContainerSpec, out_dir: Path, remote: bool
) -> dict[str, dict[str, str]]:
    binds = {}
    for mount in spec.mounts:
        if mount.volume:  # compose names its volumes PROJECT_NAME; so does this path
            binds[f"{plan.project}_{mount.source}"] = {"bind": mount.target, "mode": mount.mode}
            continue
        if mount.keys:
            if not remote:  # a remote engine gets the keys copied in (copy_keys)
                host = str(out_dir / spec.service.keys_dir)
                binds[host] = {"bind": mount.target, "mode": mount.mode}
            continue
        if remote and _is_default_workspace(plan, mount):
            continue  # this machine's project folder is not on the engine's (up says so)
        if remote:
            _refuse_client_paths(mount.compose)
        host = str(Path(os.path.expandvars(mount.source)).expanduser())
        binds[host] = {"bind": os.path.expandvars(mount.target), "mode": mount.mode}
    return binds


def _is_default_workspace(plan: Plan, mount: Mount) -> bool:
    workspace = plan.workspace
    return (
        workspace is not None
        and workspace.within_project is not None
        and mount.target == workspace.target
    )


def create_volumes(client: Any, plan: Plan) -> None:
    """Every volume the containers mount, labelled for what it is, before any container is
    created: an engine would make a missing one unlabelled (and `down` could not tell it)."""
    from docker.errors import NotFound

    for volume in named_volumes(plan):
        name = volume.engine_name(plan.project)
        try:
            client.volumes.get(name)
        except NotFound:
            client.volumes.create(name, labels=dict(volume.labels))


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


def _ports(spec: ContainerSpec) -> dict[str, Any]:
    ports: dict[str, Any] = {}
    for port in spec.ports:
        key = f"{port.container_port}/{port.proto}"
        if port.single:  # runtime.ports: docker-py's (address, port) form
            ports[key] = (port.address, port.host_port)
        else:  # one binding per address: docker-py takes a list of (address, port)
            ports.setdefault(key, []).append((port.address, port.host_port))
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
    count = -1 if gpus == "all" else gpus  # every GPU, or a count; else the devices named
    which = {"device_ids": list(gpus)} if isinstance(gpus, tuple) else {"count": count}
    return {"device_requests": [DeviceRequest(driver="nvidia", capabilities=[["gpu"]], **which)]}


def _environment(spec: ContainerSpec, remote: bool) -> dict[str, str]:
    environment = {}
    for setting in spec.environment:
        value = setting.value
        if not setting.literal:  # "$HOME" as compose would expand it
            if remote and "$" in value:
                raise EnvkitError(
                    f"ssh.home {value!r}: the engine is on another machine, where this "
                    "machine's variables mean nothing",
                    "write the engine machine's absolute path, e.g. /home/alice",
                )
            value = os.path.expandvars(value)
        environment[setting.name] = value
    return environment


def run_options(
    plan: Plan, service: Service, out_dir: Path, facts: EngineFacts | None = None
) -> dict[str, Any]:
    remote = facts is not None and facts.remote
    spec = container_spec(plan, service)
    options: dict[str, Any] = {
        "name": service.container_name,
        "hostname": service.container_name,
        "detach": True,
        "init": True,
        "environment": _environment(spec, remote),
        "labels": dict(spec.labels),
        "volumes": _volumes(plan, spec, out_dir, remote),
        "ports": _ports(spec),
        "restart_policy": {"Name": "" if spec.restart == "no" else spec.restart},
        "healthcheck": {
            "test": list(HEALTHCHECK),
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
    if spec.ipc_host:
        options["ipc_mode"] = "host"
    else:
        options["shm_size"] = spec.shm_size
    return options


def sdk_up(client: Any, plan: Plan, out_dir: Path, facts: EngineFacts, decided: UpPlan) -> None:
    """The containers as `up` decided (engine/lifecycle.py): unchanged ones kept or started as
    they are (a stopped one keeps its writable layer), changed ones recreated, new ones made."""
    from docker.errors import APIError

    for planned in decided.planned:
        service, existing = planned.service, planned.container
        if planned.action == "keep":
            continue  # already up: `up` twice changes nothing
        if planned.action == "start" and existing is not None:
            try:
                existing.start()
            except APIError as exc:
                raise start_failed(service.container_name, exc) from None
            continue
        if planned.action == "recreate" and existing is not None:
            existing.remove(force=True)  # its volumes stay; the guard said what the layer held
        options = run_options(plan, service, out_dir.resolve(), facts)
        # A remote engine's container gets its keys copied in between create and its first
        # start, where the entrypoint reads them.
        prepare = partial(copy_keys, service=service, out_dir=out_dir) if facts.remote else None
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
