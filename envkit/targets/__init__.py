"""Where checks run. Adding a kind is one module plus one entry in `open_target`'s table."""

from __future__ import annotations

from collections.abc import Callable

from envkit.errors import EnvkitError
from envkit.targets.base import CommandResult, Target


def _local(url: str) -> Target:
    from envkit.targets.local import LocalTarget

    return LocalTarget(url)


def _docker(url: str) -> Target:
    from envkit.targets.docker import DockerTarget

    return DockerTarget(url.removeprefix("docker://"), url)


def _ssh(url: str) -> Target:
    from envkit.targets.ssh import SshTarget

    return SshTarget(url)


TARGETS: dict[str, Callable[[str], Target]] = {"local": _local, "docker": _docker, "ssh": _ssh}


def open_target(url: str) -> Target:
    scheme = url.split("://", 1)[0] if "://" in url else ""
    if scheme not in TARGETS:
        raise EnvkitError(
            f"--target {url!r}: unknown kind of target",
            "use local://, docker://CONTAINER or ssh://USER@HOST:PORT",
        )
    return TARGETS[scheme](url)


__all__ = ["CommandResult", "Target", "open_target"]
