"""Files from elsewhere read safely: a regular file only (never a FIFO, a device or a
directory), under a size cap, UTF-8 checked with the line of the first bad byte named. envkit.yaml,
key files, CA certificates, locks, history imports and pod logs all come through here. And files
envkit writes for others (locks, exports, metrics) written whole or not at all.

May import: errors."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from envkit.errors import EnvkitError, FieldError

# TOML (pyproject.toml, uv.lock): the standard library's reader, tomli's on Python 3.10.
if sys.version_info >= (3, 11):
    from tomllib import TOMLDecodeError as TOMLDecodeError
    from tomllib import loads as _toml_loads
else:  # pragma: no cover - Python 3.10
    from tomli import TOMLDecodeError as TOMLDecodeError
    from tomli import loads as _toml_loads
toml_loads = _toml_loads  # a document's data; TOMLDecodeError (with its line) where not TOML


def read_regular(path: Path, limit: int, what: str, hint: str = "", size_hint: str = "") -> bytes:
    """The bytes of a regular file no larger than `limit`; FieldError otherwise (HINT joins
    every fix; SIZE_HINT, how the limit moves, only the fix of a file too large). Never opens a
    FIFO, device or directory: stat first, then read at most limit + 1 bytes (a file that grows,
    or a /proc file that says it is empty, is still bounded)."""
    try:
        info = path.stat()
    except OSError as exc:
        raise FieldError(
            f"cannot read {what} {path}: {exc.strerror or type(exc).__name__}",
            f"point to an existing {what}{hint}",
        ) from None
    if not stat.S_ISREG(info.st_mode):
        kind = "a directory" if stat.S_ISDIR(info.st_mode) else "not a regular file"
        raise FieldError(f"{what} {path} is {kind}", f"point to a regular {what}{hint}")
    if info.st_size > limit:
        raise FieldError(
            f"{what} {path} is {info.st_size} bytes, over the {limit}-byte limit",
            f"point to the right file: a {what} is far smaller{hint}{size_hint}",
        )
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        raise FieldError(
            f"cannot read {what} {path}: {exc.strerror or type(exc).__name__}",
            "check the file's permissions",
        ) from None
    if len(data) > limit:
        raise FieldError(
            f"{what} {path} is over the {limit}-byte limit", f"point to a {what}{size_hint}"
        )
    return data


def decode_utf8(data: bytes) -> tuple[str | None, int | None]:
    """(text, None), or (None, line of the first byte that is not UTF-8)."""
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        return None, data.count(b"\n", 0, exc.start) + 1


def read_utf8(path: Path, limit: int, what: str) -> tuple[str | None, int | None]:
    """A regular file's text as decode_utf8 gives it; a file read_regular refuses: EnvkitError."""
    try:
        return decode_utf8(read_regular(path, limit, what))
    except FieldError as exc:
        raise EnvkitError(exc.problem, exc.fix) from None


def write_atomically(path: Path, text: str, mode: int = 0o644) -> None:
    """TEXT into PATH whole or not at all: a temporary file beside it, synced, then renamed over
    it (a reader never sees half a file). An OSError is the caller's to word."""
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        Path(temporary).chmod(mode)
        Path(temporary).replace(path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def sha256_of(path: Path) -> str:
    """PATH's sha256 (hex), read a MiB at a time: a bundle's image or a backup is gigabytes."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def link_or_copy(source: Path, target: Path, copying: Callable[[], None] | None = None) -> None:
    """TARGET a hard link to SOURCE where both are on one filesystem, else a copy (COPYING is
    called first: a copy of gigabytes takes a while). OSError where the copy fails."""
    try:
        os.link(source, target)
        return
    except OSError:
        pass
    if copying is not None:
        copying()
    shutil.copyfile(source, target)
