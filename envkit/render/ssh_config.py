"""~/.ssh/config blocks for the environment's containers (OpenSSH and VS Code Remote-SSH)."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING

from envkit.addresses import LOOPBACKS, is_wildcard
from envkit.errors import EnvkitError
from envkit.plan.box.notebook import CONTAINER_PORT, TENSORBOARD_CONTAINER_PORT

if TYPE_CHECKING:
    from envkit.plan import Plan
    from envkit.plan.box.access import Service

LOOPBACK = ("localhost", *LOOPBACKS)


@dataclass(frozen=True)
class Identity:
    """How this machine can log in as one container's user (commands/ssh_config.py finds it)."""

    file: str | None  # an IdentityFile to write (~/.ssh/NAME), where one exists
    agent: bool = False  # ssh-agent holds an authorized key
    note: str | None = None  # what to say where neither


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


def _wake(plan: Plan, service: Service, wake: list[str] | None, jump: str | None) -> list[str]:
    """With team.idle_stop, a Match block that starts a stopped container as ssh connects: ssh
    runs `exec` while reading its config, before it dials, and only for this host's alias
    (`originalhost`: the name typed, before HostName replaces it)."""
    if not plan.runtime.idle_stop_s:
        return []
    note = "    # team.idle_stop: this container stops when idle"
    who = service.member or service.name
    words = [*(wake or ()), who]
    # OpenSSH releases read quotes and backslashes in a Match line differently (9.2 ends the
    # argument at any double quote; later ones unescape backslashes): a command with any of
    # them is left out rather than run wrong.
    if jump or wake is None or any(c in word for word in words for c in "'\"\\\n\r\0"):
        where = f"on {jump}" if jump else "on the server"
        return [f"{note}; `envkit start {who}` {where} starts it again"]
    command = shlex.join(words).replace("%", "%%")  # ssh expands %-tokens in exec
    return [
        f"{note}; connecting starts it again",
        f'Match originalhost {service.container_name} exec "{command}"',
    ]


def _identity(identity: str | Identity | None) -> list[str]:
    """An IdentityFile only where it exists and is authorized (or the user named it): with
    IdentitiesOnly, a missing file would make ssh offer no key at all."""
    if isinstance(identity, str):
        return [f"    IdentityFile {identity}", "    IdentitiesOnly yes"]
    if identity is None or (identity.file is None and identity.agent):
        return ["    # IdentityFile: ssh-agent holds an authorized key"] if identity else []
    if identity.file is not None:
        return [f"    IdentityFile {identity.file}", "    IdentitiesOnly yes"]
    return [f"    # IdentityFile: {identity.note}"]


def ssh_config_blocks(
    plan: Plan,
    *,
    member: str | None = None,
    host: str | None = None,
    identity: str | dict[str, Identity] | None = None,
    wake: list[str] | None = None,
) -> str:
    """`identity`: the IdentityFile the user named, or per container the key this machine has
    (commands/ssh_config.py). `wake`: the command line that starts a member's stopped
    container (its name is added)."""
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
        lines = [
            f"Host {service.container_name}",
            f"    HostName {address}",
            f"    Port {service.ssh_port}",
            f"    User {service.user}",
            *([f"    ProxyJump {jump}"] if jump else []),
            *_identity(identity if not isinstance(identity, dict) else identity.get(service.name)),
            "    StrictHostKeyChecking accept-new",
            "    ServerAliveInterval 60",
            *_forwards(plan, service),
            *_wake(plan, service, wake, jump),
        ]
        blocks.append("\n".join(lines) + "\n")
    header = f"# envkit {plan.project}: add to ~/.ssh/config (VS Code Remote-SSH reads it too)\n"
    return header + "\n".join(blocks)
