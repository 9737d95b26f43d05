"""Start and stop the environment as its compose file describes: through `docker compose` (v2)
or `docker-compose` (v1) where present; the status is read through the SDK by label."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from envkit.errors import EngineUnreachableError, EnvkitError

if TYPE_CHECKING:
    from envkit.plan import Plan


def compose_command() -> list[str]:
    docker = shutil.which("docker")
    if (
        docker
        and subprocess.run(
            [docker, "compose", "version"], capture_output=True, check=False
        ).returncode
        == 0
    ):
        return [docker, "compose"]
    legacy = shutil.which("docker-compose")
    if legacy:
        return [legacy]
    raise EngineUnreachableError(
        "neither `docker compose` (v2) nor `docker-compose` (>= 1.28) is installed",
        "install the Compose plugin (apt install docker-compose-plugin) or docker-compose",
    )


def run_compose(out_dir: Path, project: str, *args: str) -> subprocess.CompletedProcess[str]:
    out_dir = out_dir.resolve()
    tool = compose_command()
    command = [*tool, "-p", project, "-f", str(out_dir / "docker-compose.yml"), *args]
    done = subprocess.run(command, capture_output=True, text=True, cwd=out_dir, check=False)
    if done.returncode != 0:
        shown = " ".join([Path(tool[0]).name, *tool[1:], *args])
        raise EnvkitError(
            f"`{shown}` failed:\n{done.stderr.strip()}",
            "see the message above; `docker info` shows whether the engine is healthy",
        )
    return done


def port_in_use(address: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((address, port))
        except OSError:
            return True
    return False


def parse_mapping(mapping: str) -> tuple[str, int, str, str]:
    """A runtime.ports entry ("[IP:]HOST:CONTAINER[/PROTO]") as (host address, host port,
    container port, protocol)."""
    spec, _, proto = mapping.partition("/")
    parts = spec.split(":")
    host_ip, host_port, container_port = parts if len(parts) == 3 else ["0.0.0.0", *parts]  # noqa: S104
    return host_ip, int(host_port), container_port, proto or "tcp"


def taken_ports(plan: Plan, running: set[str]) -> list[tuple[int, str]]:
    """Host ports the environment still has to bind that something else holds, as (port, whose).
    A container of ours that is already running holds its own ports: they are not asked for."""
    wanted: list[tuple[str, int, str]] = []
    for service in plan.services:
        if service.container_name in running:
            continue
        if plan.ssh.enabled:
            owner = f"member {service.member}" if service.member else "ssh.port"
            wanted.append((plan.ssh.bind, service.ssh_port, owner))
        for mapping in plan.runtime.ports:
            host_ip, host_port, _, _ = parse_mapping(mapping)
            wanted.append((host_ip, host_port, f"runtime.ports {mapping}"))
    return [(port, owner) for address, port, owner in wanted if port_in_use(address, port)]


def wait_healthy(client: Any, names: list[str], timeout: float) -> dict[str, str]:
    deadline = time.monotonic() + timeout
    states: dict[str, str] = {}
    while time.monotonic() < deadline:
        for name in names:
            container = client.containers.get(name)
            health = container.attrs.get("State", {}).get("Health", {}).get("Status")
            states[name] = health or container.status
        if all(state == "healthy" for state in states.values()):
            return states
        if any(state in ("unhealthy", "exited", "dead") for state in states.values()):
            break
        time.sleep(1)
    return states


def use_sdk() -> bool:
    """The SDK path: asked for with ENVKIT_COMPOSE=sdk, or no compose tool is installed."""
    if os.environ.get("ENVKIT_COMPOSE") == "sdk":
        return True
    try:
        compose_command()
    except EngineUnreachableError:
        return True
    return False
