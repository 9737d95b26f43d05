"""The SSH decisions that depend on config and host, not on hardening (which is fixed): where the
port is published, and where a login lands."""

from __future__ import annotations

import re
import socket
from dataclasses import dataclass

from envkit.addresses import is_ipv6
from envkit.config.choices import Kex
from envkit.config.model import Spec

# Host sides that name the invoking user's home; compose expands $HOME, the SDK path expandvars.
HOME_SOURCES = ("$HOME", "${HOME}", "~")
# What the entrypoint accepts as ENVKIT_HOME once expanded (it checks again at start).
_PLAIN_PATH = re.compile(r"/[A-Za-z0-9_./-]*")


@dataclass(frozen=True)
class SshPlan:
    """sshd settings that are config rather than hardening (the hardening is fixed)."""

    enabled: bool
    bind: tuple[str, ...]  # host addresses the SSH port is published on, IPv6 unbracketed
    sudo: bool
    kex: Kex  # the algorithms themselves are picked at build by the image's sshd
    tcp_forwarding: bool
    agent_forwarding: bool
    unix_socket_forwarding: bool
    # The login directory: ssh.home, else where the invoking user's home is mounted ("$HOME" is
    # expanded by compose), else None: the entrypoint's /home/USER.
    home: str | None = None


def host_has_ipv6() -> bool:
    """Whether this host can listen on ::1: Docker's proxy fails the container's start on a host
    with IPv6 turned off if it is asked to publish there."""
    if not socket.has_ipv6:
        return False
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as sock:
            sock.bind(("::1", 0))
    except OSError:
        return False
    return True


def mounted_home(volumes: tuple[str, ...]) -> str | None:
    """The container side of the volume that mounts the invoking user's home, when it is a place
    a login can land: `$HOME:$HOME` (the seed's) gives $HOME, `~:/work` gives /work."""
    for volume in volumes:
        host, _, rest = volume.partition(":")
        target = rest.split(":")[0]
        if host.rstrip("/") in HOME_SOURCES and (
            target in HOME_SOURCES[:2] or _PLAIN_PATH.fullmatch(target)
        ):
            return target
    return None


def plan_ssh(spec: Spec, ipv6: bool) -> tuple[SshPlan, list[str]]:
    """The SshPlan, and notes for what the host changed."""
    notes: list[str] = []
    bind = spec.ssh.bind
    if not ipv6 and "bind" not in spec.ssh.model_fields_set:
        bind = tuple(address for address in bind if not is_ipv6(address))
        notes.append("this host has no IPv6 loopback: sshd is published on 127.0.0.1 only")
    plan = SshPlan(
        enabled=spec.ssh.enabled,
        bind=bind,
        sudo=spec.ssh.sudo,
        kex=spec.ssh.kex,
        tcp_forwarding=spec.ssh.forwarding.tcp,
        agent_forwarding=spec.ssh.forwarding.agent,
        unix_socket_forwarding=spec.ssh.forwarding.unix_sockets,
        home=spec.ssh.home or mounted_home(spec.runtime.volumes),
    )
    return plan, notes
