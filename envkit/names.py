"""The grammars of the names and versions envkit checks, written once: image references and
digests (Docker's reference grammar), Debian package names and versions (Debian policy 5.6.1
and 5.6.12), PyPI names (PEP 508) and exact versions (PEP 440), conda package names, files and
builds, sha256 digests. A value that matches one is that thing, and nothing a tool could read as
an option (none may start with "-").

May import: errors."""

from __future__ import annotations

import re

from packaging.version import InvalidVersion, Version

IMAGE_NAME = (
    r"(?:[a-zA-Z0-9.-]+(?::[0-9]+)?/)?[a-z0-9]+(?:[._-][a-z0-9]+)*"
    r"(?:/[a-z0-9]+(?:[._-][a-z0-9]+)*)*"
)
IMAGE_TAG = r"(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?"
SHA256 = r"[a-f0-9]{64}"
IMAGE_REF = IMAGE_NAME + IMAGE_TAG + rf"(?:@sha256:{SHA256})?"
# Where a team's images live: a registry host (a dot, a port or localhost tells it from a Docker
# Hub account, as Docker decides) and an optional path; the project's name is added below it.
REGISTRY_REPO = re.compile(
    r"(?:[a-zA-Z0-9-]+(?:\.[a-zA-Z0-9-]+)+(?::[0-9]+)?|[a-zA-Z0-9-]+:[0-9]+|localhost)"
    r"(?:/[a-z0-9]+(?:[._-][a-z0-9]+)*)*"
)
IMAGE_BY_DIGEST = re.compile(IMAGE_NAME + IMAGE_TAG + rf"@sha256:{SHA256}")
IMAGE_ID = re.compile(rf"sha256:{SHA256}")
DEBIAN_PACKAGE = re.compile(r"[a-z0-9][a-z0-9.+-]+")
DEBIAN_ARCH = re.compile(r"[a-z0-9][a-z0-9-]*")
DEBIAN_VERSION = re.compile(r"(?:[0-9]+:)?[0-9][A-Za-z0-9.+~-]*")
PYPI_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")
CONDA_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._+-]*")
CONDA_BUILD = re.compile(r"[A-Za-z0-9_.+!]+(?:-[A-Za-z0-9_.+!]+)*")
CONDA_PACKAGE_FILE = re.compile(r"[A-Za-z0-9_.+!-]+\.(?:conda|tar\.bz2)")
PLAIN_TOKEN = re.compile(r"[A-Za-z0-9_.+][A-Za-z0-9_.+:~@/=<>!,*-]*")


def is_pep440(text: str) -> bool:
    """An exact PEP 440 version, written as such (no spaces, no operator)."""
    if not re.fullmatch(r"[A-Za-z0-9.+!_-]+", text) or text.startswith("-"):
        return False
    try:
        Version(text)
    except InvalidVersion:
        return False
    return True
