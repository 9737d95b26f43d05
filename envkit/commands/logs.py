"""`envkit logs [MEMBER] [-f]`: what the container's entrypoint, sshd and notebook printed."""

from __future__ import annotations

import contextlib
import sys
from dataclasses import dataclass

from envkit.engine.client import docker_client
from envkit.services.project import chosen_service, existing_container, load_project


@dataclass(frozen=True, kw_only=True)
class LogsRequest:
    config: str | None = None
    member: str | None = None
    follow: bool = False
    tail: int | None = None  # only the last N lines


def run(request: LogsRequest) -> int:
    plan = load_project(request.config).plan
    service = chosen_service(plan, request.member)
    container = existing_container(docker_client(), service)
    tail = request.tail if request.tail is not None else "all"
    with contextlib.suppress(KeyboardInterrupt):
        if request.follow:
            for chunk in container.logs(stream=True, follow=True, tail=tail):
                sys.stdout.buffer.write(chunk)
                sys.stdout.buffer.flush()
        else:
            sys.stdout.buffer.write(container.logs(tail=tail))
    return 0
