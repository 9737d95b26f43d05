"""Where checks run, chosen by URL scheme. The registry below is the one list of transports:
`--target`'s help, every "not a target" message, and `open_target` are built from it. Adding a
transport is one module plus one `Transport` entry here (see CONTRIBUTING.md).

May import: engine, files, processes, errors."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from envkit.errors import EnvkitError
from envkit.targets.base import Target, TargetOptions


@dataclass(frozen=True)
class TargetUrl:
    url: str  # as the user wrote it: also the target's name in every report
    scheme: str
    rest: str  # after "scheme://"
    transport: Transport


@dataclass(frozen=True)
class Transport:
    scheme: str
    usage: str  # how a URL of this kind is written, for help texts and errors
    in_environment: bool  # it reaches envkit's built environment: mirror checks apply
    takes_python: bool  # --python chooses its interpreter
    check: Callable[[str], str | None]  # the part after "scheme://": None, or what is wrong
    opens: Callable[[TargetUrl, TargetOptions], Target]


def _named(rest: str) -> str | None:
    return None if rest.strip() else "a name is missing after ://"


def _ssh_address(rest: str) -> str | None:
    import re
    from urllib.parse import urlsplit  # here: the CLI imports this module at start-up

    try:
        parts = urlsplit(f"ssh://{rest}")
    except ValueError as exc:  # a bracket left open: "Invalid IPv6 URL"
        return str(exc)
    try:
        parts.port  # noqa: B018 - raises on a port that is not a number
    except ValueError:
        return "the port is not a number"
    if not parts.username or not parts.hostname:
        return "it needs a user and a host"
    # Both reach ssh's command line: neither may look like an option or carry a shell's word.
    if not re.fullmatch(r"[A-Za-z0-9_.][A-Za-z0-9_.-]{0,63}", parts.username):
        return f"user {parts.username!r} is not a login name"
    if not re.fullmatch(r"[A-Za-z0-9_.:%][A-Za-z0-9_.:%-]{0,253}", parts.hostname):
        return f"host {parts.hostname!r} is not a host name or address"
    return None


def _open_local(url: TargetUrl, options: TargetOptions) -> Target:
    from envkit.targets.local import LocalTarget

    return LocalTarget(url.url)


def _open_docker(url: TargetUrl, options: TargetOptions) -> Target:
    from envkit.targets.docker import DockerTarget

    return DockerTarget(url.rest, url.url)


def _open_ssh(url: TargetUrl, options: TargetOptions) -> Target:
    from envkit.targets.ssh import SshTarget

    return SshTarget(url.url)


def _open_image(url: TargetUrl, options: TargetOptions) -> Target:
    from envkit.targets.image import ImageTarget

    return ImageTarget(url.rest, url.url, options)


def _open_squashfs(url: TargetUrl, options: TargetOptions) -> Target:
    from envkit.targets.squashfs import SquashfsTarget

    return SquashfsTarget(url.scheme, url.rest, url.url)


SQUASHFS = "charliecloud://IMAGE.sqfs (also apptainer://, enroot://)"  # three runtimes, one form
TRANSPORTS: dict[str, Transport] = {
    t.scheme: t
    for t in (
        Transport("local", "local://", False, True, lambda rest: None, _open_local),
        Transport("docker", "docker://CONTAINER", True, False, _named, _open_docker),
        Transport("ssh", "ssh://USER@HOST[:PORT]", True, False, _ssh_address, _open_ssh),
        Transport("image", "image://IMAGE", True, False, _named, _open_image),
        *(
            Transport(runtime, SQUASHFS, True, False, _named, _open_squashfs)
            for runtime in ("charliecloud", "apptainer", "enroot")  # targets/squashfs.py's
        ),
    )
}


def usage() -> str:
    """'local://, docker://CONTAINER, ... or image://IMAGE', from the registry."""
    forms = list(dict.fromkeys(t.usage for t in TRANSPORTS.values()))
    return ", ".join(forms[:-1]) + " or " + forms[-1]


def parse_target(url: str, where: str = "--target") -> TargetUrl:
    """The one parser of target URLs: refuses a malformed one before anything runs anywhere."""
    scheme, sep, rest = url.partition("://")
    transport = TRANSPORTS.get(scheme) if sep else None
    if transport is None:
        raise EnvkitError(f"{where}: {url!r} is not a target", f"use {usage()}")
    if (problem := transport.check(rest)) is not None:
        raise EnvkitError(
            f"{where}: {url!r} is not a target ({problem})", f"write it as {transport.usage}"
        )
    return TargetUrl(url, scheme, rest, transport)


def open_target(url: TargetUrl | str, options: TargetOptions | None = None) -> Target:
    parsed = url if isinstance(url, TargetUrl) else parse_target(url)
    return parsed.transport.opens(parsed, options or TargetOptions())


def read_targets_file(path: Path) -> list[TargetUrl]:
    """One target URL per line; blank lines and '#' comments are ignored."""
    from envkit.errors import FieldError
    from envkit.files import decode_utf8, read_regular

    try:
        text, bad_line = decode_utf8(read_regular(path, 16 * 1024 * 1024, "targets file"))
    except FieldError as exc:
        raise EnvkitError(f"--targets: {exc.problem}", f"{exc.fix}: one target per line") from None
    if text is None:
        raise EnvkitError(f"--targets {path}:{bad_line}: not UTF-8", "write it as a text file")
    lines = enumerate(text.splitlines(), 1)
    found = ((number, line.split("#", 1)[0].strip()) for number, line in lines)  # comments out
    urls = [parse_target(url, f"{path}:{number}") for number, url in found if url]
    if not urls:
        raise EnvkitError(f"--targets {path}: no targets in it", "add one URL per line")
    return urls
