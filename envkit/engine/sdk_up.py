"""Start the environment through the docker SDK with the compose file's options, for machines
without `docker compose` or `docker-compose` (or with ENVKIT_COMPOSE=sdk)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from envkit.addresses import parse_mapping
from envkit.plan.notebook import notebook_publications

if TYPE_CHECKING:
    from envkit.plan import Plan
    from envkit.plan.access import Service

SECOND_NS = 1_000_000_000


def _volumes(plan: Plan, service: Service, out_dir: Path) -> dict[str, dict[str, str]]:
    binds = {
        str(out_dir / service.keys_dir): {"bind": "/run/envkit/keys", "mode": "ro"},
        f"{plan.project}_{service.name}-hostkeys": {
            "bind": "/var/lib/envkit/hostkeys",
            "mode": "rw",
        },
    }
    for volume in plan.runtime.volumes:
        parts = os.path.expandvars(volume).split(":")
        host, container = str(Path(parts[0]).expanduser()), parts[1]
        mode = parts[2] if len(parts) > 2 else "rw"
        if not host.startswith("/"):  # compose resolves relative paths from its file's folder
            host = str((out_dir / host).resolve())
        binds[host] = {"bind": container, "mode": mode}
    return binds


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


def _device_requests(plan: Plan) -> list[Any]:
    from docker.types import DeviceRequest

    if plan.runtime.gpus == "none":
        return []
    if plan.runtime.gpus == "all":
        return [DeviceRequest(driver="nvidia", count=-1, capabilities=[["gpu"]])]
    if isinstance(plan.runtime.gpus, int):
        return [DeviceRequest(driver="nvidia", count=plan.runtime.gpus, capabilities=[["gpu"]])]
    return [
        DeviceRequest(driver="nvidia", device_ids=list(plan.runtime.gpus), capabilities=[["gpu"]])
    ]


def run_options(plan: Plan, service: Service, out_dir: Path) -> dict[str, Any]:
    environment = {
        "ENVKIT_USER": service.user,
        "ENVKIT_UID": str(service.uid),
        "ENVKIT_GID": str(service.gid),
        "ENVKIT_SUDO": "1" if plan.ssh.sudo else "0",
        "ENVKIT_ENV_KEYS": " ".join(k for k, _ in plan.runtime.env),
        **dict(plan.runtime.env),
    }
    if plan.ssh.home:  # "$HOME" as compose would expand it
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
        "volumes": _volumes(plan, service, out_dir),
        "ports": _ports(plan, service),
        "restart_policy": {"Name": "" if plan.runtime.restart == "no" else plan.runtime.restart},
        "healthcheck": {
            "test": ["CMD", "/usr/local/bin/envkit-healthcheck"],
            "interval": 10 * SECOND_NS,
            "timeout": 5 * SECOND_NS,
            "retries": 3,
            "start_period": 20 * SECOND_NS,
        },
        "device_requests": _device_requests(plan),
    }
    if plan.runtime.ipc_host:
        options["ipc_mode"] = "host"
    else:
        options["shm_size"] = plan.runtime.shm_size
    return options


def sdk_up(client: Any, plan: Plan, out_dir: Path) -> None:
    from docker.errors import NotFound

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
        client.containers.run(plan.image.tag, **run_options(plan, service, out_dir.resolve()))
