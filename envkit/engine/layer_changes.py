"""What a member changed in a container outside its volumes: the writable layer, which a
recreate throws away. Read through the engine's changes API (`docker diff`: works on stopped
containers, and on Podman and remote engines alike) and named the way people think of it:
apt packages installed by hand, pip and conda packages, other files.

Homes, the workspace and the shared cache are volumes or bind mounts: they never appear here,
and they survive the recreate."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

# The engine's change kinds: 0 modified, 1 added, 2 deleted.
ADDED, MODIFIED, DELETED = 1, 0, 2
APT_RECORD = re.compile(r"^/var/lib/dpkg/info/([a-z0-9][a-z0-9+.-]+?)(?::[a-z0-9]+)?\.list$")
PIP_RECORD = re.compile(r"/(?:site|dist)-packages/([A-Za-z0-9_.]+?)-[^/]+\.dist-info$")
CONDA_RECORD = re.compile(r"/conda-meta/([a-z0-9_.-]+?)-[^-/]+-[^-/]+\.json$")
# What changes by itself in any running box, or is envkit's own doing: not a member's work.
NOISE = (
    "/tmp",  # noqa: S108 - a prefix compared, not a file used
    "/var/tmp",  # noqa: S108
    "/run",
    "/var/run",
    "/var/log",
    "/var/cache",
    "/var/lib/apt/lists",
    "/var/lib/envkit",
    "/etc/ssh",
    "/etc/passwd",
    "/etc/shadow",
    "/etc/group",
    "/etc/gshadow",
    "/etc/subuid",
    "/etc/subgid",
    "/etc/environment",
    "/etc/profile.d/00-envkit.sh",
    "/etc/sudoers.d",
    "/root/.cache",
    "/proc",
    "/sys",
    "/dev",
)


@dataclass(frozen=True)
class LayerChanges:
    """A container's own changes, outside its volumes."""

    container: str
    apt: tuple[str, ...] = ()  # packages installed by hand
    pip: tuple[str, ...] = ()
    conda: tuple[str, ...] = ()
    files: tuple[str, ...] = ()  # other added or changed files (a sample)
    file_count: int = 0

    def __bool__(self) -> bool:
        return bool(self.apt or self.pip or self.conda or self.file_count)

    def describe(self, who: str) -> str:
        parts = [
            f"{len(names)} {kind} package{'s' if len(names) != 1 else ''} ({_few(names)})"
            for kind, names in (("apt", self.apt), ("pip", self.pip), ("conda", self.conda))
            if names
        ]
        if self.file_count:
            parts.append(f"{self.file_count} other file(s) ({_few(self.files)})")
        return f"{who} changed {' and '.join(parts)} inside {self.container}"


def _few(names: tuple[str, ...], shown: int = 4) -> str:
    more = f", +{len(names) - shown} more" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more


def _noise(path: str, mounted: tuple[str, ...]) -> bool:
    return any(path == p or path.startswith(p.rstrip("/") + "/") for p in (*NOISE, *mounted))


def read_changes(container: Any) -> LayerChanges:
    """The container's writable layer, as people's work: packages by name, then the rest."""
    mounted = tuple(m.get("Destination", "") for m in container.attrs.get("Mounts") or ())
    apt: set[str] = set()
    pip: set[str] = set()
    conda: set[str] = set()
    files: list[str] = []
    listed = [
        (str(c.get("Path", "")), int(c.get("Kind", MODIFIED))) for c in container.diff() or ()
    ]
    # A folder is listed as changed when anything in it is: only the innermost paths count.
    parents = {path.rsplit("/", 1)[0] for path, _ in listed}
    for path, kind in listed:
        if kind == DELETED or _noise(path, mounted):
            continue
        for pattern, into in ((APT_RECORD, apt), (PIP_RECORD, pip)):
            record = pattern.search(path)
            if record and kind == ADDED:
                into.add(record.group(1).lower().replace("_", "-"))
        if (record := CONDA_RECORD.search(path)) and kind == ADDED:
            conda.add(record.group(1))
        if _is_package_file(path) or path in parents:
            continue
        files.append(path)
    return LayerChanges(
        container=container.name,
        apt=tuple(sorted(apt)),
        pip=tuple(sorted(pip)),
        conda=tuple(sorted(conda)),
        files=tuple(files[:20]),
        file_count=len(files),
    )


def _is_package_file(path: str) -> bool:
    """Files a package manager put down: counted by their packages, not one by one."""
    return (
        path.startswith(("/usr/", "/var/lib/dpkg", "/etc/", "/opt/", "/lib", "/bin", "/sbin"))
        or "/site-packages/" in path
        or "/dist-packages/" in path
    )
