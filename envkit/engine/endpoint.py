"""Which Docker engine envkit talks to, decided as the Docker CLI decides it: DOCKER_HOST, else
DOCKER_CONTEXT, else the current context in the CLI's config.json, else the local socket.

A remote engine (ssh://, or tcp:// to another machine) changes what envkit may do: no host path
on this machine means anything to it, and published ports open on its host, not here."""

from __future__ import annotations

import hashlib
import ipaddress
import json
import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from envkit.errors import EnvkitError

LOCAL_SOCKET = "unix:///var/run/docker.sock"


@dataclass(frozen=True)
class Endpoint:
    url: str
    source: str  # "DOCKER_HOST", "context NAME" or "the default socket": said in errors
    context: str | None = None

    @property
    def scheme(self) -> str:
        return urlsplit(self.url).scheme or "unix"

    @property
    def host(self) -> str | None:
        """The engine's machine as this one reaches it, or None for a local socket."""
        return None if self.scheme in ("unix", "npipe") else urlsplit(self.url).hostname

    @property
    def ssh_login(self) -> str | None:
        """USER@HOST (or HOST) of an ssh:// engine: what `ssh` is given to reach it."""
        if self.scheme != "ssh":
            return None
        parts = urlsplit(self.url)
        host = parts.hostname or ""
        return f"{parts.username}@{host}" if parts.username else host

    @property
    def remote(self) -> bool:
        """True where the engine's files are not this machine's: every ssh:// engine (even one
        on localhost: it is reached as another machine would be), and tcp:// off loopback."""
        if self.scheme == "ssh":
            return True
        if self.host in (None, "localhost"):
            return False
        try:
            return not ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return True


def _docker_config_dir() -> Path:
    return Path(os.environ.get("DOCKER_CONFIG") or Path.home() / ".docker")


def _current_context() -> str | None:
    if named := os.environ.get("DOCKER_CONTEXT"):
        return named
    try:
        config = json.loads((_docker_config_dir() / "config.json").read_text())
    except (OSError, ValueError):
        return None
    current = config.get("currentContext") if isinstance(config, dict) else None
    return current if isinstance(current, str) and current else None


def _context_host(name: str) -> str:
    """The engine address a Docker context stores (the CLI keeps it under a digest of its name)."""
    digest = hashlib.sha256(name.encode()).hexdigest()
    meta = _docker_config_dir() / "contexts" / "meta" / digest / "meta.json"
    try:
        data = json.loads(meta.read_text())
        host = data["Endpoints"]["docker"]["Host"]
    except (OSError, ValueError, KeyError, TypeError):
        raise EnvkitError(
            f"the Docker context {name!r} (DOCKER_CONTEXT or config.json's currentContext) "
            f"is not defined here ({meta} is missing or unreadable)",
            "`docker context ls` lists the contexts; `docker context use default` goes back to "
            "the local engine",
        ) from None
    if not isinstance(host, str) or not host:
        raise EnvkitError(
            f"the Docker context {name!r} names no engine address",
            f"`docker context inspect {name}`; recreate it with `docker context create`",
        )
    return host


def current_endpoint() -> Endpoint:
    if host := os.environ.get("DOCKER_HOST"):
        return Endpoint(host, "DOCKER_HOST")
    context = _current_context()
    if context and context != "default":
        return Endpoint(_context_host(context), f"the Docker context {context!r}", context)
    return Endpoint(LOCAL_SOCKET, "the default socket")
