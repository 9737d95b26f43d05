"""The project's volumes: found by their labels, sized, and copied as tar streams through the
engine's archive API (what `docker cp` uses): a backup reads a volume, a restore writes one.
Streams end to end: a home
of tens of GB never needs the disk twice, and every engine envkit reaches (local, remote,
Podman) serves the same calls. A helper container (created, never started) holds the volume at
a path while the archive API reads or writes it (running, idle: Podman mounts a container's
volumes only while it runs), and is removed afterwards."""

from __future__ import annotations

import contextlib
import tarfile
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import IO, Any, cast

from envkit.engine.client import PROJECT_LABEL
from envkit.engine.facts import engine_facts, podman_ulimits
from envkit.errors import EnvkitError
from envkit.plan.box.containers import MEMBER_LABEL, VOLUME_LABEL

MOUNT_AT = "/envkit-volume"  # where a helper container holds the volume
HELPER_LABEL = "io.envkit.helper"  # a helper left behind by an interrupted copy is found by it


@dataclass(frozen=True)
class VolumeInfo:
    name: str
    kind: str  # home, cache, hostkeys
    member: str | None
    size: int | None  # bytes, where the engine measured it


def project_volumes(client: Any, project: str, kind: str | None = None) -> list[VolumeInfo]:
    """The project's volumes (by label), with their sizes where the engine reports them."""
    filters = [f"{PROJECT_LABEL}={project}"] + ([f"{VOLUME_LABEL}={kind}"] if kind else [])
    sizes = volume_sizes(client)
    found = []
    for volume in client.volumes.list(filters={"label": filters}):
        labels = volume.attrs.get("Labels") or {}
        volume_kind, member = labels.get(VOLUME_LABEL, "?"), labels.get(MEMBER_LABEL)
        found.append(VolumeInfo(volume.name, volume_kind, member, sizes.get(volume.name)))
    return sorted(found, key=lambda v: v.name)


def volume_sizes(client: Any) -> dict[str, int]:
    """Each volume's size as the engine measures it (`docker system df -v`); empty where the
    engine does not say (Podman, a refused call)."""
    try:
        listed = client.df().get("Volumes") or []
    except Exception:  # sizes are information: a refusal costs only the figure
        return {}
    sizes = ((str(v.get("Name")), (v.get("UsageData") or {}).get("Size")) for v in listed)
    return {name: size for name, size in sizes if isinstance(size, int) and size >= 0}


@contextlib.contextmanager
def holding(client: Any, image: str, volume: str, read_only: bool) -> Iterator[Any]:
    """An idle container of IMAGE with VOLUME at MOUNT_AT, removed after."""
    helper = client.containers.create(
        image,
        command=["infinity"],
        entrypoint=["sleep"],
        name=f"envkit-volume-{uuid.uuid4().hex[:8]}",
        volumes={volume: {"bind": MOUNT_AT, "mode": "ro" if read_only else "rw"}},
        labels={HELPER_LABEL: volume},
        network_disabled=True,
        ulimits=podman_ulimits(engine_facts(client)),  # Podman's own would exceed the host's
    )
    try:
        helper.start()
        yield helper
    finally:
        with contextlib.suppress(Exception):  # best effort: a leftover is found by its label
            helper.remove(force=True)


def read_volume(client: Any, image: str, volume: str) -> Iterator[bytes]:
    """The volume's files as a tar stream (owners, modes and times kept), entries under
    `envkit-volume/`."""
    with holding(client, image, volume, read_only=True) as helper:
        yield from archive_of(client, helper, MOUNT_AT)


def archive_of(client: Any, container: Any, path: str) -> Iterator[bytes]:
    """PATH of a running CONTAINER as a tar stream, owners kept: the archive API on Docker;
    on Podman, whose archive API gives every file to the caller, the container's own tar
    (written to the exec's stdout, which the engine frames, so binary-safe)."""
    if not engine_facts(client).podman:
        stream, _ = container.get_archive(path)
        yield from stream
        return
    parent, _, name = path.rstrip("/").rpartition("/")
    command = ["tar", "-C", parent or "/", "--numeric-owner", "-cf", "-", name]
    for out, _err in container.exec_run(command, stream=True, demux=True, user="root").output:
        if out:
            yield out


def volume_is_empty(client: Any, image: str, volume: str) -> bool:
    """Whether the volume holds nothing: only its own folder in its archive."""
    with holding(client, image, volume, read_only=True) as helper:
        stream = archive_of(client, helper, MOUNT_AT)
        with tarfile.open(fileobj=cast(IO[bytes], ChunkReader(stream)), mode="r|") as archive:
            for member in archive:
                if member.name.strip("/") not in ("", MOUNT_AT.strip("/")):
                    return False
    return True


def write_volume(client: Any, image: str, volume: str, tar_chunks: Iterable[bytes]) -> None:
    """Unpack the tar stream TAR_CHUNKS (entries under `envkit-volume/`, as read_volume gives
    them) into the volume, owners and modes as they are in the archive. Sent as it is read."""
    with holding(client, image, volume, read_only=False) as helper:
        # The archive's owners are kept on Docker and Podman alike (without copyUIDGID, which
        # would give every file to the container's user).
        if not helper.put_archive("/", iter(tar_chunks)):
            raise EnvkitError(
                f"the engine did not unpack the archive into {volume}",
                "see the engine's log; the volume may be partly written",
            )


class ChunkReader:
    """An iterable of byte chunks as a file object tarfile can read in stream mode; every byte
    read is handed to SINK as well, where one is given (a backup hashes and compresses them)."""

    def __init__(
        self, chunks: Iterable[bytes], sink: Callable[[bytes], None] | None = None
    ) -> None:
        self.chunks = iter(chunks)
        self.buffer = b""
        self.sink = sink

    def read(self, size: int = -1) -> bytes:
        while size < 0 or len(self.buffer) < size:
            chunk = next(self.chunks, None)
            if chunk is None:
                break
            self.buffer += chunk
        cut = len(self.buffer) if size < 0 else size
        data, self.buffer = self.buffer[:cut], self.buffer[cut:]
        if data and self.sink is not None:
            self.sink(data)
        return data
