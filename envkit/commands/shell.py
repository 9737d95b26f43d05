"""`envkit shell [MEMBER]`: an interactive login shell in the container, as the member's login
user, in the workspace: no SSH key needed, only access to the engine (as `docker exec` has)."""

from __future__ import annotations

import sys
from dataclasses import dataclass

from envkit.engine.client import docker_client
from envkit.engine.terminal import InContainer, docker_cli, no_terminal_error, run_cli, shell_argv
from envkit.services.project import chosen_service, load_project, running_container


@dataclass(frozen=True, kw_only=True)
class ShellRequest:
    config: str | None = None
    member: str | None = None


def run(request: ShellRequest) -> int:
    plan = load_project(request.config).plan
    service = chosen_service(plan, request.member)
    running_container(docker_client(), service)  # a clear word where it is not running
    if docker_cli() is None:
        raise no_terminal_error()
    where = InContainer(service.container_name, service.user, plan.login_dir(service))
    return run_cli(shell_argv(where, tty=sys.stdin.isatty() and sys.stdout.isatty()))
