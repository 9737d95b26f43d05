"""`envkit notebook url`: the URL, with its token, of a container's JupyterLab (and TensorBoard),
for whoever may run `docker exec` here; members on SSH get the same from `envkit-notebook url`
inside their container (the token file is readable by the login user)."""

from __future__ import annotations

import sys
from dataclasses import dataclass

from envkit.engine.client import docker_client
from envkit.errors import EnvkitError
from envkit.plan.box.notebook import TOKEN_FILE
from envkit.services.project import existing_container, load_project


@dataclass(frozen=True, kw_only=True)
class NotebookUrlRequest:
    config: str | None = None
    member: str | None = None


def run(request: NotebookUrlRequest) -> int:
    member = request.member
    plan = load_project(request.config).plan
    if not plan.notebook.enabled:
        raise EnvkitError(
            "envkit.yaml serves no notebook", "set notebook.enabled: true, then build"
        )
    services = list(plan.services)
    if member is not None:
        services = [s for s in services if s.member in (member, None)]
        if member not in plan.members or not services:
            raise EnvkitError(
                f"--member {member!r} is not in team.members",
                f"choose one of: {', '.join(plan.members)}" if plan.members else "drop --member",
            )
    elif len(services) > 1:
        raise EnvkitError(
            "per-member mode: every member has a server of their own",
            f"pass --member (one of: {', '.join(plan.members)})",
        )
    service = services[0]
    container = existing_container(docker_client(), service)
    read = container.exec_run(["cat", TOKEN_FILE], user="root")
    token = read.output.decode("utf-8", "replace").strip()
    if read.exit_code != 0 or not token:
        raise EnvkitError(
            f"{service.container_name} has no notebook token yet",
            "its image predates notebook: — run `envkit build` and `envkit up`",
        )
    sys.stdout.write(f"http://127.0.0.1:{service.notebook_port}/lab?token={token}\n")
    if service.tensorboard_port is not None:
        sys.stdout.write(f"tensorboard: http://127.0.0.1:{service.tensorboard_port}/\n")
    return 0
