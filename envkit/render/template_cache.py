"""Where compiled templates are kept between runs, so a render does not compile them again.

Compiling the templates was a fifth of a cold `envkit render` (about 80 ms of 440). Jinja2's
own bytecode cache keeps each template's compiled code under a key made of the template's name
and the checksum of its source, and rejects code from another Python; a changed template can
never be served stale. The folder is the user's own cache ($ENVKIT_CACHE_DIR, else
$XDG_CACHE_HOME/envkit, else ~/.cache/envkit), mode 0700: compiled code is executed, so a
folder another user could write to is never read. A cache that cannot be made or written is no
cache: the render compiles as before and says nothing, because the cache only saves time."""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from jinja2.bccache import Bucket, FileSystemBytecodeCache

CACHE_ENV = "ENVKIT_CACHE_DIR"
OFF_ENV = "ENVKIT_NO_TEMPLATE_CACHE"  # set (to anything) to compile every time


def _private_folder(folder: Path) -> bool:
    """FOLDER exists (made if missing), is a real folder owned by this user, and nobody else can
    write to it."""
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = folder.lstat()
    except OSError:
        return False
    return (
        stat.S_ISDIR(info.st_mode)
        and info.st_uid == os.getuid()
        and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    )


class _QuietCache(FileSystemBytecodeCache):
    """Jinja2's file cache whose failures are misses: a full disk or a read-only home never
    fails a render."""

    def load_bytecode(self, bucket: Bucket) -> None:
        try:
            super().load_bytecode(bucket)
        except (OSError, EOFError, ValueError):
            bucket.reset()

    def dump_bytecode(self, bucket: Bucket) -> None:
        with contextlib.suppress(OSError):
            super().dump_bytecode(bucket)


def template_cache() -> FileSystemBytecodeCache | None:
    """The bytecode cache to give the Jinja2 environment, or None where there is none to use."""
    if os.environ.get(OFF_ENV):
        return None
    explicit, xdg = os.environ.get(CACHE_ENV), os.environ.get("XDG_CACHE_HOME")
    root = Path(explicit) if explicit else (Path(xdg) if xdg else Path.home() / ".cache") / "envkit"
    folder = root / "templates"
    return _QuietCache(str(folder), "%s.jinja-cache") if _private_folder(folder) else None
