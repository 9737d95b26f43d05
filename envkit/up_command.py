"""`envkit up`, `envkit down`, `envkit status`, `envkit ssh-config`."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from envkit.errors import EngineUnreachableError, EnvkitError


def _loaded(config: str | None) -> tuple[Any, Any, Path]:
    from envkit.config.load import load_spec
    from envkit.plan import make_plan

    loaded = load_spec(config)
    return loaded, make_plan(loaded), loaded.path.parent / ".envkit"


def _use_sdk() -> bool:
    """The SDK path: asked for with ENVKIT_COMPOSE=sdk, or no compose tool is installed."""
    from envkit.engine.compose import compose_command

    if os.environ.get("ENVKIT_COMPOSE") == "sdk":
        return True
    try:
        compose_command()
    except EngineUnreachableError:
        return True
    return False


def _check_ports(client: Any, plan: Any) -> None:
    from envkit.engine.compose import taken_ports
    from envkit.engine.team_sync import running_containers

    taken = taken_ports(plan, running_containers(client, plan.project))
    if taken:
        port, owner = taken[0]
        raise EnvkitError(
            f"host port {port} ({owner}) is already in use",
            "pick another port in envkit.yaml, or stop what holds it",
        )


def up(config: str | None, timeout: float) -> int:
    from docker.errors import ImageNotFound

    from envkit.engine.compose import run_compose, wait_healthy
    from envkit.engine.team_sync import departed, running_containers, sync_keys
    from envkit.render import render_files, write_files
    from envkit.ssh_config import connect_host
    from envkit.targets.docker import docker_client

    _, plan, out_dir = _loaded(config)
    write_files(render_files(plan), out_dir)
    client = docker_client()
    try:
        client.images.get(plan.image_tag)
    except ImageNotFound:
        raise EnvkitError(
            f"image {plan.image_tag} does not exist yet", "run `envkit build` first"
        ) from None
    _check_ports(client, plan)
    running_before = running_containers(client, plan.project)
    leaving = departed(client, plan)
    for gone in leaving:  # a member who left envkit.yaml: the container goes, its volume stays
        gone.remove(force=True)
    if _use_sdk():
        from envkit.engine.sdk_up import sdk_up

        sdk_up(client, plan, out_dir)
    else:
        run_compose(out_dir, plan.project, "up", "-d", "--no-build")
    names = [s.container_name for s in plan.services]
    states = wait_healthy(client, names, timeout)
    refreshed = {s.container: s for s in sync_keys(client, plan, running_before)}
    for gone in leaving:
        sys.stdout.write(
            f"{gone.name}: removed with its open sessions (no longer in envkit.yaml)\n"
        )
    for service in plan.services:
        state = states.get(service.container_name, "unknown")
        sys.stdout.write(f"{service.container_name}: {state}")
        sync = refreshed.get(service.container_name)
        if sync is not None and sync.refreshed:
            sys.stdout.write(f" (keys refreshed: {sync.keys})")
            if sync.ended:
                sys.stdout.write(
                    f" (a key was removed: open SSH sessions of {service.user} ended, "
                    f"{sync.ended} process(es))"
                )
        if plan.ssh_enabled:
            host = connect_host(plan)
            sys.stdout.write(f"  ssh -p {service.ssh_port} {service.user}@{host}")
        sys.stdout.write("\n")
    if any(state != "healthy" for state in states.values()):
        raise EngineUnreachableError(
            "not every container became healthy", "see `envkit status` and `docker logs CONTAINER`"
        )
    return 0


def down(config: str | None, volumes: bool) -> int:
    from envkit.engine.compose import run_compose
    from envkit.engine.team_sync import ours
    from envkit.targets.docker import docker_client

    _, plan, out_dir = _loaded(config)
    if not (out_dir / "docker-compose.yml").is_file():
        raise EnvkitError(f"nothing rendered in {out_dir}", "run `envkit up` first")

    client = docker_client()
    if not _use_sdk():
        run_compose(out_dir, plan.project, "down")  # its network too
    # By label, on both paths: every container `up` made, members who have left included.
    for container in client.containers.list(all=True, filters=ours(plan.project)):
        container.remove(force=True)
    if volumes:
        # Likewise by label: compose alone would keep the volumes of members who have left.
        for volume in client.volumes.list(filters={"label": f"io.envkit.project={plan.project}"}):
            volume.remove(force=True)
    sys.stdout.write(
        f"{plan.project}: stopped"
        + (
            " and its volumes removed\n"
            if volumes
            else " (volumes kept: host keys stay the same)\n"
        )
    )
    return 0


def status(config: str | None) -> int:
    from envkit.engine.compose import containers
    from envkit.targets.docker import docker_client

    _, plan, _ = _loaded(config)
    found = {c.name: c for c in containers(docker_client(), plan.project)}
    for service in plan.services:
        container = found.get(service.container_name)
        if container is None:
            sys.stdout.write(f"{service.container_name}: not created\n")
            continue
        health = container.attrs.get("State", {}).get("Health", {}).get("Status", "-")
        ports = ", ".join(
            f"{v[0]['HostIp']}:{v[0]['HostPort']}->{k}"
            for k, v in (container.ports or {}).items()
            if v
        )
        # The image id shows at a glance that every member runs the same (verified) image.
        image = str(container.attrs.get("Image", "")).removeprefix("sha256:")[:12]
        sys.stdout.write(
            f"{service.container_name}: {container.status} ({health}) {ports}  image {image}\n"
        )
    return 0 if found else 1


def ssh_config(
    config: str | None, member: str | None, host: str | None, identity: str | None
) -> int:
    from envkit.ssh_config import ssh_config_blocks

    _, plan, _ = _loaded(config)
    sys.stdout.write(ssh_config_blocks(plan, member=member, host=host, identity=identity))
    return 0
