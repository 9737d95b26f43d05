"""`envkit exec [MEMBER] -- COMMAND`: one command in the container, as the member's login user,
in the login environment and the workspace; its exit code is envkit's. A terminal only where
this side has one; stdin passed on where it is not a terminal (a pipe, a file)."""

from __future__ import annotations

import sys
from dataclasses import dataclass

from envkit.engine.client import docker_client
from envkit.engine.terminal import InContainer, docker_cli, exec_argv, exec_sdk, run_cli
from envkit.errors import EnvkitError
from envkit.services.project import chosen_service, is_member, load_project, running_container


@dataclass(frozen=True, kw_only=True)
class ExecRequest:
    config: str | None = None
    words: tuple[str, ...] = ()  # [MEMBER] COMMAND...: the member's name first where it is one


def run(request: ExecRequest) -> int:
    plan = load_project(request.config).plan
    words = list(request.words)
    member = words.pop(0) if words and len(words) > 1 and is_member(plan, words[0]) else None
    if not words:
        raise EnvkitError("no command to run", "e.g. envkit exec -- python -c 'import torch'")
    service = chosen_service(plan, member)
    client = docker_client()
    running_container(client, service)
    where = InContainer(service.container_name, service.user, plan.login_dir(service))
    if docker_cli() is None:
        return exec_sdk(client, where, words)
    stdin = not sys.stdin.isatty()
    tty = sys.stdin.isatty() and sys.stdout.isatty()
    return run_cli(exec_argv(where, words, stdin=stdin or tty, tty=tty))
