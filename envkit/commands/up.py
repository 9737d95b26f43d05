"""`envkit up`: start the environment and wait until sshd is healthy; twice changes nothing."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from envkit.commands.project import Project, load_project, render_project
from envkit.errors import EngineUnreachableError, EnvkitError

if TYPE_CHECKING:
    from envkit.engine.team_sync import KeySync
    from envkit.plan import Plan
    from envkit.plan.access import Service


def _check_ports(client: Any, plan: Plan) -> None:
    from envkit.engine.client import running_containers
    from envkit.engine.compose import taken_ports

    taken = taken_ports(plan, running_containers(client, plan.project))
    if taken:
        raise EnvkitError(
            f"cannot publish host port {taken[0]}",
            "pick another port in envkit.yaml, or stop what holds it"
            if taken[0].why == "in use"
            else "list only this host's addresses in envkit.yaml (ssh.bind, runtime.ports)",
        )


def _require_keys(project: Project) -> None:
    """sshd with no key at all locks everyone out; say so before starting it, unless asked."""
    from envkit.config.rules import missing_keys
    from envkit.errors import ConfigError

    rule = missing_keys(project.loaded.spec)
    if rule is not None:
        raise ConfigError(str(project.config), [project.loaded.issue(*rule)])


def up(config: str | None, timeout: float) -> int:
    from envkit.engine.client import docker_client, require_image, running_containers
    from envkit.engine.compose import run_compose, use_sdk, wait_healthy
    from envkit.engine.team_sync import departed, sync_keys, sync_notebook_tokens

    project = load_project(config)
    _require_keys(project)
    plan, out_dir = project.plan, project.context_dir
    render_project(project)
    client = docker_client()
    require_image(client, plan.image.tag, "run `envkit build` first")
    _check_ports(client, plan)
    running_before = running_containers(client, plan.project)
    leaving = departed(client, plan)
    for gone in leaving:  # a member who left envkit.yaml: the container goes, its volume stays
        gone.remove(force=True)
    if use_sdk():
        from envkit.engine.sdk_up import sdk_up

        sdk_up(client, plan, out_dir)
    else:
        run_compose(out_dir, plan.project, "up", "-d", "--no-build")
    names = [s.container_name for s in plan.services]
    states = wait_healthy(client, names, timeout)
    refreshed = {s.container: s for s in sync_keys(client, plan, running_before)}
    for name in sync_notebook_tokens(client, plan):
        sys.stdout.write(f"{name}: the member list changed; the notebook token was rotated\n")
    for gone in leaving:
        sys.stdout.write(
            f"{gone.name}: removed with its open sessions (no longer in envkit.yaml)\n"
        )
    for service in plan.services:
        _say_state(plan, service, states, refreshed.get(service.container_name))
    if any(state != "healthy" for state in states.values()):
        raise EngineUnreachableError(
            "not every container became healthy", "see `envkit status` and `docker logs CONTAINER`"
        )
    return 0


def _say_state(plan: Plan, service: Service, states: dict[str, str], sync: KeySync | None) -> None:
    """One line per container: its health, what changed in its keys, and how to log in."""
    from envkit.render.ssh_config import connect_host

    sys.stdout.write(f"{service.container_name}: {states.get(service.container_name, 'unknown')}")
    if sync is not None and sync.refreshed:
        sys.stdout.write(f" (keys refreshed: {sync.keys})")
        if sync.ended:
            sys.stdout.write(
                f" (a key was removed: open SSH sessions of {service.user} ended, "
                f"{sync.ended} process(es))"
            )
    if plan.ssh.enabled:
        sys.stdout.write(f"  ssh -p {service.ssh_port} {service.user}@{connect_host(plan)}")
    sys.stdout.write("\n")
