"""A digest of what a build is made from: the rendered build context (both Dockerfiles, the mirror
and runtime files), the build arguments and, for a locked build, the lock. The same envkit.yaml
and lock give the same digest on every machine, so it can name the team's image in a registry.

Left out: what the build never sees or what changes per machine or member: the compose file,
.dockerignore, envkit's file manifest and the members' keys (mounted at run time)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path

LEFT_OUT = frozenset({"docker-compose.yml", ".dockerignore", ".envkit-files"})
LEFT_OUT_DIRS = ("keys/",)


def build_files(context: Path) -> list[Path]:
    """The files of CONTEXT that go into the build, in a fixed order."""
    found = []
    for path in sorted(context.rglob("*")):
        relative = path.relative_to(context).as_posix()
        if not path.is_file() or relative in LEFT_OUT or relative.startswith(LEFT_OUT_DIRS):
            continue
        found.append(path)
    return found


def context_digest(
    context: Path, build_args: Mapping[str, str] | None = None, lock_text: str | None = None
) -> str:
    """sha256 hex over every build file (its path, mode bit and bytes), the build args and the
    lock; each part is length-prefixed, so no two different inputs run together into one."""
    digest = hashlib.sha256()

    def part(label: str, data: bytes) -> None:
        digest.update(f"{label}\0{len(data)}\0".encode())
        digest.update(data)

    for path in build_files(context):
        executable = "x" if path.stat().st_mode & 0o111 else "-"
        part(f"file {path.relative_to(context).as_posix()} {executable}", path.read_bytes())
    for key, value in sorted((build_args or {}).items()):
        part(f"arg {key}", value.encode())
    if lock_text is not None:
        part("lock", lock_text.encode())
    return digest.hexdigest()
