"""A digest of what a build is made from: the rendered build context (both Dockerfiles, the mirror
and runtime files, the CA certificates), the build arguments and, for a locked build, the lock.
The same envkit.yaml and lock give the same digest on every machine (it is computed from the
rendered text, not from files on a disk), so it can name the team's image in a registry.

Left out: what the build never sees, or what changes per machine or member: the compose file,
.dockerignore and the members' keys (mounted at run time, never in the image)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

LEFT_OUT = frozenset({"docker-compose.yml", ".dockerignore"})
LEFT_OUT_DIRS = ("keys/",)


def context_digest(
    context: Mapping[str, str],
    build_args: Mapping[str, str] | None = None,
    lock_text: str | None = None,
    platforms: tuple[str, ...] = (),
) -> str:
    """sha256 hex over every build file (path and text, in path order), the build args, the
    lock and the platforms; each part is length-prefixed, so no two different inputs run
    together into one."""
    digest = hashlib.sha256()

    def part(label: str, data: bytes) -> None:
        digest.update(f"{label}\0{len(data)}\0".encode())
        digest.update(data)

    for path, text in sorted(context.items()):
        if path not in LEFT_OUT and not path.startswith(LEFT_OUT_DIRS):
            part(f"file {path}", text.encode())
    for key, value in sorted((build_args or {}).items()):
        part(f"arg {key}", value.encode())
    if lock_text is not None:
        part("lock", lock_text.encode())
    if platforms:
        part("platforms", ",".join(sorted(platforms)).encode())
    return digest.hexdigest()
