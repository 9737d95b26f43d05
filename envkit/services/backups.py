"""Backups of the project's volumes: each a gzip'd tar stream read through the engine (owners,
modes and times kept), written beside a manifest (what it holds, its sha256, the image and
inputs it was taken from), and read back the same way. Streamed end to end: a home of tens of
GB is never held in memory or written to disk twice."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import sys
import tarfile
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any, cast

from envkit import __version__
from envkit.engine.volumes import ChunkReader, VolumeInfo, read_volume, write_volume
from envkit.errors import EnvkitError, FieldError
from envkit.files import read_regular, sha256_of

MANIFEST_LIMIT = 1 << 20
CHUNK = 1 << 20
LEVEL = 1  # deflate's fastest: source text still shrinks about tenfold, checkpoints never do


@dataclass(frozen=True)
class Manifest:
    envkit_version: str
    project: str
    volume: str
    kind: str
    member: str | None
    created_at: str
    archive: str  # the .tar.gz beside this manifest
    sha256: str  # of the .tar.gz
    compressed_bytes: int
    tar_bytes: int
    files: int
    data_bytes: int  # the files' own bytes
    image: str  # the image the helper ran (the project's)
    image_id: str | None
    inputs: str | None  # the inputs digest the image was built from


class _ParallelGzip:
    """A gzip file written as one member per MEMBER_BYTES of input, each compressed on a
    worker thread (zlib lets go of the GIL) and written in order: a home is mostly
    checkpoints, which deflate cannot shrink and which one core compresses at about 60 MB/s.
    Concatenated members are one gzip file to every reader (RFC 1952, `gzip -d`, Python's
    gzip module). At most two members per worker wait in memory."""

    MEMBER_BYTES = 4 << 20

    def __init__(self, raw: Callable[[bytes], object]) -> None:
        self.raw = raw
        self.workers = max(1, min(os.cpu_count() or 1, 16))
        self.pool = ThreadPoolExecutor(self.workers, thread_name_prefix="envkit-gzip")
        self.pending: deque[Future[bytes]] = deque()
        self.buffer = bytearray()

    def write(self, data: bytes) -> None:
        self.buffer += data
        while len(self.buffer) >= self.MEMBER_BYTES:
            self._submit(bytes(self.buffer[: self.MEMBER_BYTES]))
            del self.buffer[: self.MEMBER_BYTES]

    def _submit(self, piece: bytes) -> None:
        self.pending.append(self.pool.submit(gzip.compress, piece, LEVEL, mtime=0))
        while len(self.pending) > 2 * self.workers:
            self.raw(self.pending.popleft().result())

    def close(self) -> None:
        try:
            if self.buffer or not self.pending:
                self._submit(bytes(self.buffer))
            while self.pending:
                self.raw(self.pending.popleft().result())
        finally:
            self.pool.shutdown(cancel_futures=True)


class _Progress:
    """Bytes so far, on a terminal's stderr, at most once a second."""

    def __init__(self, what: str) -> None:
        self.what, self.bytes, self.shown = what, 0, 0.0
        self.on = sys.stderr.isatty()

    def add(self, count: int) -> None:
        self.bytes += count
        now = time.monotonic()
        if self.on and now - self.shown >= 1:
            sys.stderr.write(f"\r{self.what}: {self.bytes / 1e6:,.0f} MB")
            sys.stderr.flush()
            self.shown = now

    def done(self) -> None:
        if self.on:
            sys.stderr.write("\r" + " " * 60 + "\r")


def write_backup(
    client: Any, image: Any, volume: VolumeInfo, project: str, folder: Path, inputs: str | None
) -> Manifest:
    """VOLUME as FOLDER/VOLUME-STAMP.tar.gz and its manifest (.json beside it)."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    folder.mkdir(parents=True, exist_ok=True)
    archive = folder / f"{volume.name}-{stamp}.tar.gz"
    partial = archive.with_name(archive.name + ".partial")
    digest = hashlib.sha256()
    progress = _Progress(f"backing up {volume.name}")
    files = data = tar_bytes = 0
    with partial.open("wb") as raw:

        def hashed(data: bytes) -> None:
            digest.update(data)
            raw.write(data)

        zipped = _ParallelGzip(hashed)

        def sink(chunk: bytes) -> None:
            nonlocal tar_bytes
            tar_bytes += len(chunk)
            progress.add(len(chunk))
            zipped.write(chunk)

        try:
            tee = ChunkReader(read_volume(client, image.id, volume.name), sink)
            with tarfile.open(fileobj=cast(IO[bytes], tee), mode="r|") as stream:
                for member in stream:
                    if member.isfile():
                        files, data = files + 1, data + member.size
            while tee.read(CHUNK):  # the archive's end blocks, past the last member
                pass
        finally:
            zipped.close()
    progress.done()
    partial.replace(archive)
    manifest = Manifest(
        envkit_version=__version__,
        project=project,
        volume=volume.name,
        kind=volume.kind,
        member=volume.member,
        created_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        archive=archive.name,
        sha256=digest.hexdigest(),
        compressed_bytes=archive.stat().st_size,
        tar_bytes=tar_bytes,
        files=files,
        data_bytes=data,
        image=str((image.tags or [image.id])[0]),
        image_id=str(image.id),
        inputs=inputs,
    )
    manifest_path(archive).write_text(json.dumps(asdict(manifest), indent=2) + "\n")
    return manifest


def manifest_path(archive: Path) -> Path:
    return archive.with_name(archive.name.removesuffix(".tar.gz") + ".json")


def read_manifest(archive: Path) -> Manifest:
    path = manifest_path(archive)
    fix = f"restore an archive `envkit backup` wrote: {path.name} sits beside it"
    try:
        return Manifest(**json.loads(read_regular(path, MANIFEST_LIMIT, "backup manifest")))
    except FieldError as exc:
        raise EnvkitError(exc.problem, fix) from None
    except (ValueError, TypeError) as exc:
        raise EnvkitError(f"{path} is not a backup manifest envkit wrote ({exc})", fix) from None


def checked_archive(archive: Path, manifest: Manifest) -> None:
    """The archive's bytes against the manifest's sha256, before anything is written."""
    if sha256_of(archive) != manifest.sha256:
        raise EnvkitError(
            f"{archive} does not match its manifest's sha256 (damaged or changed since the backup)",
            "restore another backup; this one would not put back what was saved",
        )


def restore_backup(client: Any, image: str, archive: Path, volume: str) -> int:
    """ARCHIVE unpacked into VOLUME; the bytes sent."""
    progress = _Progress(f"restoring {volume}")

    def chunks() -> Iterator[bytes]:
        with gzip.open(archive, "rb") as handle:
            for chunk in iter(lambda: handle.read(CHUNK), b""):
                progress.add(len(chunk))
                yield chunk

    write_volume(client, image, volume, chunks())
    progress.done()
    return progress.bytes
