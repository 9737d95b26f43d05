"""`envkit ssh-config`: ~/.ssh/config blocks for the environment's containers."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from envkit.engine.endpoint import current_endpoint
from envkit.render.ssh_config import Identity, connect_host, ssh_config_blocks
from envkit.services.identities import agent_keys, identity_for
from envkit.services.project import load_project


@dataclass(frozen=True, kw_only=True)
class SshConfigRequest:
    config: str | None = None
    member: str | None = None
    host: str | None = None  # the HostName to write (default: localhost, or a remote engine's)
    identity: str | None = None  # the IdentityFile to write


def run(request: SshConfigRequest) -> int:
    host, member, identity = request.host, request.member, request.identity
    project = load_project(request.config)
    plan = project.plan
    endpoint = current_endpoint()
    if host is None and endpoint.remote:  # the containers run on the engine's machine
        host = endpoint.host
    # The Python running envkit now, by its absolute path: ssh runs the command with the
    # user's login PATH, which may not hold this virtual environment.
    wake = [
        sys.executable,
        "-m",
        "envkit",
        "start",
        "--quiet",
        "--config",
        str(project.config.resolve()),
    ]
    found: str | dict[str, Identity] = identity or {}
    if identity is None:  # the key this machine has for each container's user
        agent = agent_keys()
        found = {s.name: identity_for(s.keys, Path.home(), agent) for s in plan.services}
    sys.stdout.write(ssh_config_blocks(plan, member=member, host=host, identity=found, wake=wake))
    return 0


def target_urls(config: str | None) -> list[str]:
    """The verify targets envkit.yaml implies, for shell completion: each container by name
    (docker://) and by its SSH login (ssh://), the image, and this machine."""
    plan = load_project(config).plan
    urls = [f"docker://{s.container_name}" for s in plan.services]
    if plan.ssh.enabled:
        host = connect_host(plan)
        urls += [f"ssh://{s.user}@{host}:{s.ssh_port}" for s in plan.services]
    return [*urls, f"image://{plan.image.tag}", "local://"]
