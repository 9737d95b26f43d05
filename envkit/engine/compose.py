"""Start and stop the environment as its compose file describes: through `docker compose` (v2)
or `docker-compose` (v1) where present; the status is read through the SDK by label."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from envkit.addresses import is_ipv6, parse_mapping, with_port
from envkit.errors import EngineUnreachableError, EnvkitError
from envkit.plan.box.containers import HEALTHCHECK
from envkit.plan.box.notebook import notebook_publications
from envkit.processes import quiet_output

if TYPE_CHECKING:
    from envkit.plan import Plan


def compose_command() -> list[str]:
    docker = shutil.which("docker")
    if docker and quiet_output([docker, "compose", "version"], timeout=30) is not None:
        return [docker, "compose"]
    if legacy := shutil.which("docker-compose"):
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


@dataclass(frozen=True)
class PortProblem:
    """A host port envkit.yaml asks for that cannot be published."""

    port: int
    owner: str  # which setting asks for it
    address: str
    why: str  # "in use" | "not an address of this host"

    def __str__(self) -> str:
        return f"{with_port(self.address, self.port)} ({self.owner}): {self.why}"


def port_problem(address: str, port: int) -> str | None:
    """Why the host cannot listen on address:port, or None when it can."""
    family = socket.AF_INET6 if is_ipv6(address) else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:  # [::] must not stand for 0.0.0.0 too
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind((address, port))
    except OSError as exc:
        if exc.errno in (errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT):
            return "not an address of this host"
        return "in use"
    return None


def taken_ports(plan: Plan, running: set[str]) -> list[PortProblem]:
    """Host ports the environment still has to bind that it cannot, with why. A container of ours
    that is already running holds its own ports: they are not asked for."""
    wanted: list[tuple[str, int, str]] = []
    for service in plan.services:
        if service.container_name in running:
            continue
        if plan.ssh.enabled:
            owner = f"member {service.member}" if service.member else "ssh.port"
            wanted += [(address, service.ssh_port, owner) for address in plan.ssh.bind]
        for mapping in plan.runtime.ports:
            host_ip, host_port, _, _ = parse_mapping(mapping)
            wanted.append((host_ip, host_port, f"runtime.ports {mapping}"))
        for published in notebook_publications(plan.notebook, service):
            wanted.append((published.address, published.host_port, published.field))
    found = [(port, owner, address, port_problem(address, port)) for address, port, owner in wanted]
    return [PortProblem(port, owner, address, why) for port, owner, address, why in found if why]


def run_podman_healthcheck(client: Any, name: str) -> None:
    """Podman runs healthchecks from systemd timers, and a host without systemd never runs them:
    run it once through Podman's own API (the compatible API has no call for it)."""
    from docker.errors import DockerException

    url = f"{client.api.base_url}/v4.0.0/libpod/containers/{name}/healthcheck"
    with contextlib.suppress(DockerException):  # not yet started: the next poll asks again
        client.api._get(url)  # the SDK's own transport, on Podman's own path


def answers_ready(container: Any) -> bool:
    """The image's own health check, run now rather than at the engine's next interval: Docker
    20.10 probes first only after `interval` (10 s) and has no start_interval."""
    from docker.errors import DockerException

    try:
        return bool(container.exec_run(list(HEALTHCHECK[1:])).exit_code == 0)
    except DockerException:  # not running yet (or no longer): the engine's state says which
        return False


def health_of(container: Any) -> str | None:
    """The engine's health status, but `healthy` while it still says `starting` where the
    image's own check answers now: up's readiness and status's, one rule."""
    health = ((container.attrs.get("State") or {}).get("Health") or {}).get("Status")
    if health == "starting" and container.status == "running" and answers_ready(container):
        return "healthy"
    return health


def wait_healthy(
    client: Any, names: list[str], timeout: float, podman: bool = False
) -> dict[str, str]:
    deadline = time.monotonic() + timeout
    states: dict[str, str] = {}
    while time.monotonic() < deadline:
        for name in names:
            if podman:
                run_podman_healthcheck(client, name)
            container = client.containers.get(name)
            states[name] = health_of(container) or container.status
        if all(state == "healthy" for state in states.values()):
            return states
        if any(state in ("unhealthy", "exited", "dead") for state in states.values()):
            break
        time.sleep(0.5)
    return states


def use_sdk(remote: bool = False) -> bool:
    """The SDK path: for a remote engine (compose would bind-mount paths of this machine on the
    engine's), where ENVKIT_COMPOSE=sdk asks for it, or where no compose tool is installed."""
    if remote or os.environ.get("ENVKIT_COMPOSE") == "sdk":
        return True
    try:
        compose_command()
    except EngineUnreachableError:
        return True
    return False
