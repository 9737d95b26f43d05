"""docker://NAME: a running container, reached with `docker exec` through the docker SDK."""

from __future__ import annotations

import io
import posixpath
import tarfile
from typing import Any

from envkit.errors import EngineUnreachableError
from envkit.targets.base import CommandResult


def docker_client() -> Any:
    import docker  # imported here: only commands that talk to the engine pay for it
    from docker.errors import DockerException

    try:
        client = docker.from_env()
        client.ping()
    except DockerException as exc:
        import os

        where = os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
        raise EngineUnreachableError(
            f"the Docker engine at {where} does not answer ({exc.__class__.__name__})",
            "start it (`sudo systemctl start docker`), or point DOCKER_HOST at a running engine",
        ) from None
    return client


class DockerTarget:
    def __init__(self, container: str, name: str | None = None, client: Any = None) -> None:
        from docker.errors import NotFound

        self.name = name or f"docker://{container}"
        self.client = client or docker_client()
        try:
            self.container = self.client.containers.get(container)
        except NotFound:
            raise EngineUnreachableError(
                f"no container named {container}", "start it with `envkit up`, or check `docker ps`"
            ) from None
        if self.container.status != "running":
            raise EngineUnreachableError(
                f"container {container} is {self.container.status}",
                f"start it: `docker start {container}` or `envkit up`",
            )

    def put(self, data: bytes, remote_path: str) -> None:
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w") as archive:
            info = tarfile.TarInfo(posixpath.basename(remote_path))
            info.size = len(data)
            info.mode = 0o644
            archive.addfile(info, io.BytesIO(data))
        self.container.exec_run(["mkdir", "-p", posixpath.dirname(remote_path)])
        self.container.put_archive(posixpath.dirname(remote_path), buffer.getvalue())

    def run(self, argv: list[str], timeout: float) -> CommandResult:
        # `timeout` inside the container bounds the exec; the SDK call itself has no deadline.
        result = self.container.exec_run(
            ["timeout", "-k", "10", str(int(timeout)), *argv], demux=True
        )
        out, err = result.output
        return CommandResult(
            result.exit_code,
            (out or b"").decode(errors="replace"),
            (err or b"").decode(errors="replace"),
        )

    def get(self, remote_path: str) -> bytes:
        stream, _ = self.container.get_archive(remote_path)
        with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as archive:
            member = archive.getmembers()[0]
            handle = archive.extractfile(member)
            return handle.read() if handle else b""

    def close(self) -> None:
        pass
