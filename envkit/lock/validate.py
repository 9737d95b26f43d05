"""An envkit.lock is data, never code: every entry is checked to be what its section says it is
before anything is rendered or built from it. A lock is reviewed in pull requests as a list of
versions; an entry that could act (an apt option, a pip requirement line with an option, a URL
or a marker, another image, a plain-http conda URL) is refused with its line.

Per section: [base] an image name, its id (sha256:<64 hex>), its digest as NAME@sha256:<64 hex>
or "-"; [apt] Debian package names and versions; [pip] PEP 508 names, exact PEP 440 versions,
sha256 sums; [conda] package names, version-builds and https URLs of the configured channels;
[torch] and [requested] plain tokens."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import NamedTuple
from urllib.parse import urlsplit

from envkit.checks.programs.lockfile import Lock
from envkit.names import (
    CONDA_BUILD,
    CONDA_NAME,
    CONDA_PACKAGE_FILE,
    DEBIAN_ARCH,
    DEBIAN_PACKAGE,
    DEBIAN_VERSION,
    IMAGE_BY_DIGEST,
    IMAGE_ID,
    IMAGE_NAME,
    IMAGE_TAG,
    PLAIN_TOKEN,
    PYPI_NAME,
    SHA256,
    is_pep440,
)

IMAGE = re.compile(IMAGE_NAME + IMAGE_TAG)
ABSOLUTE_PATH = re.compile(r"/[A-Za-z0-9_./+-]*")
APT_ORIGINS = ("base", "added")
PIP_INSTALLER = re.compile(r"[a-z0-9][a-z0-9._-]*|-")
PIP_SUMS = re.compile(rf"-|record:{SHA256}|sha256:{SHA256}(?:,sha256:{SHA256})*")
MD5 = re.compile(r"[a-f0-9]{32}")
TORCH_KEYS = ("torch", "cuda", "cudnn", "nccl")
# Every kind `envkit lock` writes into [requested] (lock/requested.py), and nothing else. Their
# values are envkit.yaml's requests as written (a marker's quotes, a URL's #fragment): printable
# ASCII without blanks, never interpreted.
REQUESTED_KINDS = (
    "apt",
    "base",
    "conda",
    "conda-pip",
    "pip",
    "python",
    "torch",
    "cuda",
    "notebook",
    "requirements",
    "project",
)
REQUESTED_VALUE = re.compile(r"[!-~]+")
BASE_KEYS = ("arch", "conda-prefix", "digest", "id", "image")
# Where conda's own channels live when no mirror routes them (conda's channel_alias and
# Anaconda's defaults); a mirror's hosts join them from the plan.
LOOPBACK = ("127.0.0.1", "::1", "localhost")
OFFICIAL_CONDA = ("https://conda.anaconda.org/", "https://repo.anaconda.com/")

Rule = Callable[[str, tuple[str, ...]], "str | None"]


class Problem(NamedTuple):
    section: str
    key: str
    problem: str
    fix: str


def _is(pattern: re.Pattern[str], value: str) -> bool:
    return bool(pattern.fullmatch(value))


def _base(key: str, values: tuple[str, ...]) -> str | None:
    (value,) = values
    if key not in BASE_KEYS:
        return f"[base] has no entry {key!r} (it holds {', '.join(BASE_KEYS)})"
    shapes = {  # each entry's shape: whether the value has it, and it in words
        "image": (_is(IMAGE, value), "an image name"),
        "id": (_is(IMAGE_ID, value), "sha256:<64 hex>"),
        "digest": (
            value == "-" or _is(IMAGE_BY_DIGEST, value),
            "NAME@sha256:<64 hex>, or - for a base from no registry",
        ),
        "arch": (_is(DEBIAN_ARCH, value), "a dpkg architecture"),
        "conda-prefix": (value == "-" or _is(ABSOLUTE_PATH, value), "an absolute path, or -"),
    }
    good, shape = shapes[key]
    return None if good else f"[base] {key} {value!r} is not {shape}"


def _apt(key: str, values: tuple[str, ...]) -> str | None:
    name, _, arch = key.partition(":")
    version, origin = values
    if not _is(DEBIAN_PACKAGE, name) or not _is(DEBIAN_ARCH, arch):
        return f"[apt] {key!r} is not a Debian package name:architecture"
    if not _is(DEBIAN_VERSION, version):
        return f"[apt] {key} version {version!r} is not a Debian version"
    if origin not in APT_ORIGINS:
        return f"[apt] {key} origin {origin!r} is not base or added"
    return None


def _pip(key: str, values: tuple[str, ...]) -> str | None:
    version, installer, sums = values
    if not _is(PYPI_NAME, key):
        return f"[pip] {key!r} is not a package name (PEP 508)"
    if not is_pep440(version):
        return f"[pip] {key} version {version!r} is not an exact version (PEP 440)"
    if not _is(PIP_INSTALLER, installer):
        return f"[pip] {key} installer {installer!r} is not an installer's name"
    if not _is(PIP_SUMS, sums):
        return f"[pip] {key} sums {sums!r} are not sha256:<64 hex>[,sha256:...], record: or -"
    return None


def _conda(key: str, values: tuple[str, ...]) -> str | None:
    version_build, url = values
    if not _is(CONDA_NAME, key) or not _is(CONDA_BUILD, version_build):
        return f"[conda] {key} {version_build!r} is not a conda package and version-build"
    if url == "-":
        return None
    location, _, md5 = url.partition("#")
    parts = urlsplit(location)
    file_name = parts.path.rsplit("/", 1)[-1]
    # Plain http only from a mirror on the building machine's own loopback (which the channel
    # check below also requires envkit.yaml to configure).
    secure = parts.scheme == "https" or (parts.scheme == "http" and parts.hostname in LOOPBACK)
    if not secure or not parts.netloc or not _is(CONDA_PACKAGE_FILE, file_name):
        return f"[conda] {key} URL {url!r} is not an https URL of a package file"
    if md5 and not _is(MD5, md5):
        return f"[conda] {key} URL {url!r} carries no md5 after '#'"
    return None


def _torch(key: str, values: tuple[str, ...]) -> str | None:
    (value,) = values
    if key not in TORCH_KEYS:
        return f"[torch] has no entry {key!r} (it holds {', '.join(TORCH_KEYS)})"
    return None if value == "-" or _is(PLAIN_TOKEN, value) else f"[torch] {key} {value!r}"


def _requested(key: str, values: tuple[str, ...]) -> str | None:
    kind, _, value = key.partition(":")
    if kind not in REQUESTED_KINDS or not _is(REQUESTED_VALUE, value):
        return f"[requested] {key!r} is not KIND:VALUE ({', '.join(REQUESTED_KINDS)})"
    return None


RULES: dict[str, Rule] = {
    "base": _base,
    "apt": _apt,
    "pip": _pip,
    "conda": _conda,
    "torch": _torch,
    "requested": _requested,
}
FIXES = {
    "base": "a lock names its base by id and registry digest as `envkit lock` wrote them",
    "apt": "apt entries are NAME:ARCH VERSION base|added, exactly as `envkit lock` wrote them",
    "pip": "pip entries are NAME VERSION INSTALLER SUMS: no options, URLs or markers",
    "conda": "conda entries are NAME VERSION-BUILD https://CHANNEL/.../FILE#MD5",
    "torch": "torch entries are versions as `envkit lock` wrote them",
    "requested": "[requested] is written by `envkit lock` from envkit.yaml",
}


def problems(lock: Lock, conda_prefixes: tuple[str, ...] | None = None) -> list[Problem]:
    """Every entry that is not what its section says; `conda_prefixes`, when given, are the
    URLs the configured channels serve from (a conda URL must start with one)."""
    found = []
    for section, rule in RULES.items():
        for key, values in lock.get(section, {}).items():
            problem = rule(key, values)
            if problem is None and section == "conda" and conda_prefixes is not None:
                problem = _conda_channel(key, values[1], conda_prefixes)
            if problem is not None:
                found.append(Problem(section, key, problem, FIXES[section]))
    found += _base_agrees(lock.get("base", {}))
    return found


def repository(reference: str) -> str:
    """An image reference without its tag or digest (a registry's :port kept)."""
    head, _, tail = reference.split("@", 1)[0].rpartition("/")
    tail = tail.split(":", 1)[0]
    return f"{head}/{tail}" if head else tail


def _base_agrees(base: dict[str, tuple[str, ...]]) -> list[Problem]:
    """The digest names the [base] image itself: FROM another image cannot come in by digest."""
    image, digest = base.get("image", ("-",))[0], base.get("digest", ("-",))[0]
    if digest == "-" or not _is(IMAGE_BY_DIGEST, digest) or not _is(IMAGE, image):
        return []
    if repository(digest) == repository(image):
        return []
    problem = f"[base] digest {digest!r} names another image than [base] image {image!r}"
    return [Problem("base", "digest", problem, FIXES["base"])]


def _conda_channel(key: str, url: str, prefixes: tuple[str, ...]) -> str | None:
    if url == "-" or url.startswith(tuple(p.rstrip("/") + "/" for p in prefixes)):
        return None
    return f"[conda] {key} URL {url!r} is from none of the configured channels"
