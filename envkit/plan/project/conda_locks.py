"""A project's conda lock file as it is, read for the image: conda-lock's `conda-lock.yml` and
pixi's `pixi.lock` name every package of every platform with its URL and checksums. The image
installs one platform's packages exactly (nothing solved, each download checked against the
lock's sha256 or md5), with each URL sent through the configured conda mirror; the lock's PyPI
packages are installed by version through the pip mirror, each file checked against the lock's
sha256.

Refused, each at its line: a lock without the image's platform (with the ones it has), a pixi
environment that does not exist (with the ones that do), a package without a checksum, a URL
that is not https (a mirror on this machine's loopback aside), a lock of a format envkit does
not know."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, Literal
from urllib.parse import parse_qs, unquote, urlsplit

from packaging.utils import InvalidWheelFilename, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from envkit.catalog.compat import cuda_of
from envkit.config.load import Loc
from envkit.errors import ConfigError, file_issue
from envkit.names import CONDA_PACKAGE_FILE, PYPI_NAME

# The platform of the images envkit builds today (the engine's architecture, x86-64).
IMAGE_PLATFORM = "linux-64"
PIXI_ENVIRONMENT = "default"
PYPI_VERSION = re.compile(r"[A-Za-z0-9.!+_-]+")
SAFE_URL = re.compile(r"(?:git\+)?https://[A-Za-z0-9.-]+(?::\d+)?/[A-Za-z0-9._~%/+=-]*")


@dataclass(frozen=True)
class CondaLockPackages:
    """One platform's packages of a lock file, as the image installs them."""

    source: str  # the lock's project-relative path
    kind: Literal["conda-lock", "pixi", "explicit"]
    platform: str
    conda: tuple[tuple[str, str, str], ...]  # (package URL, sha256, md5), "" where absent
    # (name, pin, sha256): pin "==VERSION" (from the pip mirror), " @ URL" (a wheel or sdist
    # the lock takes from another host, checked by its sha256 where the lock has one) or
    # " @ git+URL@COMMIT" (a git package, pinned by its commit: no sha256)
    pypi: tuple[tuple[str, str, str], ...]
    python: str | None  # the lock's python version, where it has one
    editable: tuple[str, ...] = ()  # the project's own packages by path: editable at first start

    @property
    def needs_git(self) -> bool:
        return any(pin.startswith(" @ git+") for _, pin, _ in self.pypi)

    @property
    def unhashed(self) -> tuple[str, ...]:
        """The PyPI packages the lock holds no sha256 for, as pip's requirement lines: git
        packages at their commit, files by their https URL."""
        return tuple(f"{name}{pin}" for name, pin, digest in self.pypi if not digest)

    @property
    def torch(self) -> tuple[str, str | None] | None:
        """(version, CUDA version or "cpu") of the lock's pytorch, where it has one: conda's
        pytorch is then the environment's torch. The CUDA is the one torch was built with: its
        build string's (conda-forge's `cuda126_…`, the pytorch channel's `py3.10_cuda12.1_…`),
        else pytorch-cuda's, else the cuda-version package's (a floor, which may be newer than
        the build); "cpu" for a CPU build."""
        found = {n: (v, b) for n, v, b in map(_parts, (url for url, _, _ in self.conda))}
        if "pytorch" not in found:
            return self._pypi_torch()
        version, build = found["pytorch"]
        if build.startswith("cpu"):
            return version, "cpu"
        built = re.search(r"cuda(\d+)\.?(\d)", build)
        if built:
            return version, f"{built.group(1)}.{built.group(2)}"
        cuda = found.get("pytorch-cuda") or found.get("cuda-version")
        return version, cuda[0] if cuda else None

    def _pypi_torch(self) -> tuple[str, str | None] | None:
        """The lock's torch from PyPI or the PyTorch index (torch==2.6.0+cu124, or a wheel
        by URL): its release, and the CUDA of its local label."""
        for name, pin, _ in self.pypi:
            if name.lower() != "torch":
                continue
            try:
                if pin.startswith("=="):
                    version = Version(pin[2:])
                else:  # a wheel by URL; an sdist or a git checkout names no build
                    version = parse_wheel_filename(unquote(pin.rsplit("/", 1)[-1]))[1]
            except (InvalidVersion, InvalidWheelFilename):
                return None
            label = str(version.local or "").split(".")[0]
            cuda = cuda_of(label) if re.fullmatch(r"cu\d{2,3}", label) else None
            return version.base_version, "cpu" if label.startswith("cpu") else cuda
        return None


def lock_kind(data: Any) -> Literal["conda-lock", "pixi"] | None:
    """Which lock format DATA (a parsed YAML file) is, or None for an environment file."""
    if not isinstance(data, dict):
        return None
    if "package" in data and isinstance(data.get("metadata"), dict):
        return "conda-lock"
    return "pixi" if "environments" in data and "packages" in data else None


class _Reading:
    def __init__(self, name: str, lines: dict[Loc, int]) -> None:
        self.name, self.lines = name, lines
        self.issues: list[Any] = []
        self.editable: list[str] = []  # project-relative folders

    def line(self, *loc: str | int) -> int:
        return self.lines.get(tuple(loc), 1)

    def refuse(self, loc: tuple[str | int, ...], value: str | None, problem: str, fix: str) -> None:
        self.issues.append(file_issue(self.name, self.line(*loc), value, problem, fix))

    def url(self, loc: tuple[str | int, ...], url: Any) -> str | None:
        text = str(url)
        problem = check_url(text)
        if problem is None:
            return text
        fix = "relock from https channels" if "https" in problem else "relock"
        self.refuse(loc, text, problem, fix)
        return None

    def digests(
        self, loc: tuple[str | int, ...], entry: dict[str, Any], url: str
    ) -> tuple[str, str] | None:
        """(sha256, md5) of a package, "" for one the lock leaves out; None without either."""
        sha256, md5 = (str(entry.get(key) or "").lower() for key in ("sha256", "md5"))
        sha256 = sha256 if re.fullmatch(r"[0-9a-f]{64}", sha256) else ""
        md5 = md5 if re.fullmatch(r"[0-9a-f]{32}", md5) else ""
        if sha256 or md5:
            return sha256, md5
        self.refuse(loc, url, "a package without a sha256 or md5", "relock: every entry needs one")
        return None


def check_url(url: str) -> str | None:
    """Why URL is not one a lock's package may come from (https, or plain http on loopback,
    a conda package file), or None."""
    parts = urlsplit(url)
    loopback = parts.hostname in ("127.0.0.1", "localhost", "::1")
    if parts.scheme != "https" and not (parts.scheme == "http" and loopback):
        return "a package URL that is not https"
    if not CONDA_PACKAGE_FILE.fullmatch(url.rsplit("/", 1)[-1]):
        return "not the URL of a conda package file"
    return None


def read_conda_lock(
    name: str,
    data: dict[str, Any],
    lines: dict[Loc, int],
    platform: str = IMAGE_PLATFORM,
    environment: str = PIXI_ENVIRONMENT,
) -> CondaLockPackages:
    """PLATFORM's packages of the lock NAME (parsed DATA, LINES of each field), of a pixi
    lock's ENVIRONMENT; every problem in the file reported at once (ConfigError)."""
    reading = _Reading(name, lines)
    kind = lock_kind(data)
    read: Callable[[_Reading, dict[str, Any], str], tuple[Any, Any, Any]]
    read = _conda_lock if kind == "conda-lock" else partial(_pixi, environment=environment)
    conda, pypi, python = read(reading, data, platform)
    if reading.issues:
        raise ConfigError(name, reading.issues)
    assert kind is not None
    return CondaLockPackages(
        name, kind, platform, tuple(conda), tuple(pypi), python, tuple(reading.editable)
    )


def _platform_missing(
    reading: _Reading, loc: tuple[str | int, ...], have: list[str], want: str
) -> None:
    reading.refuse(
        loc,
        want,
        f"the lock has no {want} packages (it has {', '.join(have) or 'none'})",
        f"relock for {want} (conda-lock -p {want}, or add it to pixi's platforms)",
    )


def _conda_lock(reading: _Reading, data: dict[str, Any], platform: str) -> tuple[Any, Any, Any]:
    platforms = [str(p) for p in (data["metadata"].get("platforms") or [])]
    if platform not in platforms:
        _platform_missing(reading, ("metadata", "platforms"), platforms, platform)
        return [], [], None
    conda, pypi, python = [], [], None
    packages = data.get("package") or []
    for index, entry in enumerate(packages if isinstance(packages, list) else []):
        if not isinstance(entry, dict) or entry.get("platform") != platform:
            continue
        loc = ("package", index)
        manager = entry.get("manager")
        hashes = entry.get("hash")
        digest_source: dict[str, Any] = hashes if isinstance(hashes, dict) else {}
        if manager == "conda":
            url = reading.url((*loc, "url"), entry.get("url"))
            digests = reading.digests((*loc, "hash"), digest_source, str(entry.get("url")))
            if url and digests:
                conda.append((url, *digests))
            python = python_of(url) or python
        elif manager == "pip":
            pypi += _pypi(reading, loc, entry.get("name"), entry.get("version"), digest_source)
        else:
            reading.refuse((*loc, "manager"), str(manager), "an unknown package manager", "relock")
    return conda, pypi, python


def _pixi(
    reading: _Reading, data: dict[str, Any], platform: str, environment: str
) -> tuple[Any, Any, Any]:
    environments = data.get("environments") or {}
    chosen = environments.get(environment) if isinstance(environments, dict) else None
    if not isinstance(chosen, dict):
        have = ", ".join(environments) if isinstance(environments, dict) else "none"
        problem = f"pixi.lock has no {environment!r} environment (it has {have})"
        reading.refuse(("environments",), environment, problem, "name one in conda.environment")
        return [], [], None
    by_platform = chosen.get("packages") or {}
    if platform not in by_platform:
        _platform_missing(reading, ("environments", environment), list(by_platform), platform)
        return [], [], None
    records = {}
    for index, entry in enumerate(data.get("packages") or []):
        if isinstance(entry, dict):
            # v6 names a record by its conda:/pypi: key, v5 by its url: (path: for a folder)
            key = entry.get("conda") or entry.get("pypi") or entry.get("url") or entry.get("path")
            records[str(key)] = (index, entry)
    conda, pypi, python = [], [], None
    listed = ("environments", environment, "packages", platform)
    for position, item in enumerate(by_platform[platform] or []):
        loc: tuple[str | int, ...] = (*listed, position)
        key = str(item.get("conda") or item.get("pypi")) if isinstance(item, dict) else ""
        if key not in records:
            reading.refuse(
                loc, key, "a package the lock's packages: list does not describe", "relock"
            )
            continue
        index, entry = records[key]
        if "conda" in item:
            url = reading.url(loc, key)
            digests = reading.digests(("packages", index), entry, key)
            if url and digests:
                conda.append((url, *digests))
            python = python_of(url) or python
        else:
            pypi += _pypi(
                reading, ("packages", index), entry.get("name"), entry.get("version"), entry, key
            )
    return conda, pypi, python


def _parts(url: str) -> tuple[str, str, str]:
    """(name, version, build) of a package from its file name."""
    stem = url.rsplit("/", 1)[-1].removesuffix(".conda").removesuffix(".tar.bz2")
    name, version, build = [*stem.rsplit("-", 2), "", ""][:3]
    return name, version, build


def python_of(url: str | None) -> str | None:
    """The interpreter's version where URL is conda's python package (python-3.11.9-h...)."""
    name, version, build = _parts(url or "")
    return version if name == "python" and build else None


def _pypi(
    reading: _Reading,
    loc: tuple[str | int, ...],
    name: Any,
    version: Any,
    hashes: dict[str, Any],
    source: str = "",
) -> list[tuple[str, str, str]]:
    """A lock's PyPI package as the image installs it; SOURCE is pixi's `pypi:` key (a URL,
    a git URL or a path), "" where the lock names none (conda-lock's pip entries)."""
    source = source.removeprefix("direct+")  # pixi's mark of a file by URL, not an index
    if not (PYPI_NAME.fullmatch(str(name)) and PYPI_VERSION.fullmatch(str(version))):
        reading.refuse(loc, f"{name} {version}", "not a PyPI name and version", "relock")
        return []
    if source.startswith("git+"):
        return _git(reading, loc, str(name), source)
    if source and not source.startswith(("https://", "http://")):
        return _by_path(reading, loc, str(name), source)
    source, _, fragment = source.partition("#")  # pixi's `…whl#sha256=HEX`
    digest = str(hashes.get("sha256") or fragment.removeprefix("sha256=")).lower()
    digest = digest if re.fullmatch(r"[0-9a-f]{64}", digest) else ""
    if not source or urlsplit(source).hostname == "files.pythonhosted.org":
        if not digest:
            reading.refuse(loc, str(name), "a PyPI package without a sha256", "relock")
            return []
        return [(str(name), f"=={version}", digest)]  # by version, through the pip mirror
    if not SAFE_URL.fullmatch(source) or urlsplit(source).scheme != "https":
        reading.refuse(loc, source, "a package URL that is not plain https", "relock")
        return []
    # an index that serves no sha256 (the PyTorch index for some files): by its https URL,
    # said unchecked in the Dockerfile, rather than the whole lock refused for one file
    return [(str(name), f" @ {source}", digest)]


def _by_path(
    reading: _Reading, loc: tuple[str | int, ...], name: str, source: str
) -> list[tuple[str, str, str]]:
    """A folder of the project (itself too) is installed editable from the workspace at first
    start; a file by path, another scheme or a folder outside is refused at its line."""
    if "://" in source:
        reading.refuse(loc, source, "a package URL that is not plain https", "relock")
        return []
    fix = "publish it to an index, or install it in build.steps"
    folder = posixpath.normpath(posixpath.join(posixpath.dirname(reading.name), source))
    if source.endswith((".whl", ".tar.gz", ".zip")):
        reading.refuse(loc, source, f"{name} is a file by path ({source}), not a folder", fix)
    elif folder.startswith("../") or folder == ".." or posixpath.isabs(source):
        problem = f"{name} is taken from the path {source}, which is outside the project"
        reading.refuse(loc, source, problem, fix)
    else:  # as `-e .` in a requirements file: installed editable from the workspace
        reading.editable.append(folder)
    return []


def _git(
    reading: _Reading, loc: tuple[str | int, ...], name: str, source: str
) -> list[tuple[str, str, str]]:
    pin = git_pin(source)
    if pin is None:
        fix = "relock (pixi pins each git package to the commit it resolved)"
        problem = f"{name}'s git source is not plain https pinned to a commit"
        reading.refuse(loc, source, problem, fix)
        return []
    return [(name, pin, "")]


def git_pin(source: str) -> str | None:
    """pixi's `git+https://HOST/PATH?rev=R#COMMIT` (uv.lock's without git+) as pip's
    ` @ git+https://HOST/PATH@COMMIT`: the commit the lock resolved, which is the package's
    checksum; None where it is not pinned to a commit or not plain https."""
    url, _, commit = source.removeprefix("git+").partition("#")
    url, _, query = url.partition("?")
    sub = parse_qs(query).get("subdirectory", [""])[0]  # a package inside the repository
    plain = SAFE_URL.fullmatch(url) and re.fullmatch(r"[A-Za-z0-9._/-]*", sub)
    if not re.fullmatch(r"[0-9a-f]{7,40}", commit) or not plain:
        return None
    return f" @ git+{url}@{commit}" + (f"#subdirectory={sub}" if sub else "")


def through_mirror(
    url: str, custom_channels: dict[str, str], default_channels: tuple[str, ...]
) -> str:
    """URL with its channel's host replaced by the mirror's, as the .condarc routes that channel:
    conda.anaconda.org/<channel>/... through custom_channels, repo.anaconda.com/pkgs/<name>/...
    through the default_channels of that name. Anything else stays as it is."""
    parts = urlsplit(url)
    path = parts.path.lstrip("/")
    if parts.hostname == "conda.anaconda.org":
        channel, _, rest = path.partition("/")
        if channel in custom_channels:
            return f"{custom_channels[channel].rstrip('/')}/{channel}/{rest}"
    if parts.hostname == "repo.anaconda.com" and path.startswith("pkgs/"):
        channel, _, rest = path[len("pkgs/") :].partition("/")
        for base in default_channels:
            if base.rstrip("/").endswith(f"/pkgs/{channel}"):
                return f"{base.rstrip('/')}/{rest}"
    return url
