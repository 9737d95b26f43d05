"""`envkit ssh-config`: ~/.ssh/config blocks for the environment's containers."""

from __future__ import annotations

import sys

from envkit.commands.project import load_project


def ssh_config(
    config: str | None, member: str | None, host: str | None, identity: str | None
) -> int:
    from envkit.engine.endpoint import current_endpoint
    from envkit.render.ssh_config import ssh_config_blocks

    plan = load_project(config).plan
    endpoint = current_endpoint()
    if host is None and endpoint.remote:  # the containers run on the engine's machine
        host = endpoint.host
    sys.stdout.write(ssh_config_blocks(plan, member=member, host=host, identity=identity))
    return 0
