"""~/.ssh/config blocks for the environment's containers (OpenSSH and VS Code Remote-SSH)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from envkit.addresses import LOOPBACKS, is_wildcard
from envkit.errors import EnvkitError
from envkit.plan.notebook import CONTAINER_PORT, TENSORBOARD_CONTAINER_PORT

if TYPE_CHECKING:
    from envkit.plan import Plan
    from envkit.plan.access import Service

LOOPBACK = ("localhost", *LOOPBACKS)


def connect_host(plan: Plan, host: str | None = None) -> str:
    """Where users connect: the given host, else localhost when sshd listens on a loopback or
    on every interface (ssh tries each address localhost resolves to), else the one address."""
    if host:
        return host
    if any(a in LOOPBACKS or is_wildcard(a) for a in plan.ssh.bind):
        return "localhost"
    return plan.ssh.bind[0]


def jump_host(plan: Plan, host: str | None) -> str | None:
    """The server to jump through: sshd published on the server's loopback (the default) is
    reached from a laptop by `ssh -J server`, so nothing listens on the network but the
    server's own sshd."""
    if host and host not in LOOPBACK and all(a in LOOPBACKS for a in plan.ssh.bind):
        return host
    return None


def _forwards(plan: Plan, service: Service) -> list[str]:
    """JupyterLab and TensorBoard through the tunnel, on the same local ports as published, so
    `envkit notebook url` works either way; only where sshd allows TCP forwarding."""
    if not plan.ssh.tcp_forwarding:
        return []
    lines = []
    if service.notebook_port is not None:
        lines.append(f"    LocalForward {service.notebook_port} 127.0.0.1:{CONTAINER_PORT}")
    if service.tensorboard_port is not None:
        port = TENSORBOARD_CONTAINER_PORT
        lines.append(f"    LocalForward {service.tensorboard_port} 127.0.0.1:{port}")
    return lines


def ssh_config_blocks(
    plan: Plan, *, member: str | None = None, host: str | None = None, identity: str | None = None
) -> str:
    if not plan.ssh.enabled:
        raise EnvkitError("ssh is disabled in envkit.yaml", "set ssh.enabled: true")
    services = list(plan.services)
    per_member = any(s.member for s in services)
    if member is not None:
        known = plan.members
        if member not in known:
            raise EnvkitError(
                f"--member {member!r} is not in team.members",
                f"choose one of: {', '.join(known)}" if known else "add the member to team.members",
            )
        if per_member:
            services = [s for s in services if s.member == member]
        # shared mode: every member reaches the one container, so the block is the same
    jump = jump_host(plan, host)
    address = "localhost" if jump else connect_host(plan, host)
    blocks = []
    for service in services:
        user = service.user
        lines = [
            f"Host {service.container_name}",
            f"    HostName {address}",
            f"    Port {service.ssh_port}",
            f"    User {user}",
            *([f"    ProxyJump {jump}"] if jump else []),
            f"    IdentityFile {identity or '~/.ssh/id_ed25519'}",
            "    IdentitiesOnly yes",
            "    StrictHostKeyChecking accept-new",
            "    ServerAliveInterval 60",
            *_forwards(plan, service),
        ]
        blocks.append("\n".join(lines) + "\n")
    header = f"# envkit {plan.project}: add to ~/.ssh/config (VS Code Remote-SSH reads it too)\n"
    return header + "\n".join(blocks)
