"""docker://NAME: a running container, reached with `docker exec` through the docker SDK.

Every engine call carries a socket deadline: a paused container never answers an exec, so without
one `envkit verify` would wait forever. When a call fails, the container's own state says why."""

from __future__ import annotations

import io
import posixpath
import tarfile
import threading
import time
from typing import Any

from envkit.engine.client import docker_client
from envkit.errors import EngineUnreachableError, EnvkitError
from envkit.targets.base import CommandResult, Target, TargetDeadlineError


def container_state(container: Any) -> EngineUnreachableError | None:
    """Why a container cannot run commands now (paused, stopped, killed), or None if it can."""
    name = container.name
    state = container.attrs.get("State", {})
    if state.get("Paused"):
        return EngineUnreachableError(
            f"container {name} is paused (frozen by `docker pause`): nothing in it can run",
            f"`docker unpause {name}`, then verify again",
        )
    if state.get("Running"):
        return None
    code = state.get("ExitCode")
    if state.get("OOMKilled"):
        why = "killed by the out-of-memory killer"
    elif code == 137:
        why = "killed: SIGKILL from `docker kill`, the OOM killer, or a stop that ran out of time"
    elif code == 143:
        why = "stopped by SIGTERM (`docker stop`)"
    else:
        why = f"exit code {code}"
    return EngineUnreachableError(
        f"container {name} is {container.status} ({why})",
        f"`envkit up` or `docker start {name}`, then verify again; `docker logs {name}` says more",
    )


class DockerTarget(Target):
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
        if (refused := container_state(self.container)) is not None:
            raise refused

    @property
    def image_id(self) -> str | None:
        """The container's image (as the engine recorded it at start): history keys on it."""
        image = self.container.attrs.get("Image")
        return str(image) if image else None

    def _call(self, what: str, timeout: float, call: Any, *args: Any, **kwargs: Any) -> Any:
        """One engine call under a deadline. The SDK turns socket timeouts off while it reads an
        exec's output, so the call runs in a daemon thread that is abandoned at the deadline. A
        failure is explained by the container's state where that tells (paused, killed,
        removed), else by the deadline or the engine's own words."""
        box: dict[str, Any] = {}

        def work() -> None:
            try:
                box["value"] = call(*args, **kwargs)
            except Exception as exc:  # handed to the caller below
                box["error"] = exc

        worker = threading.Thread(target=work, daemon=True, name=f"envkit-{what}")
        worker.start()
        worker.join(timeout)
        if worker.is_alive():
            why = self.diagnose()
            raise why or TargetDeadlineError(
                f"{self.name} did not answer within {timeout:.0f}s ({what})",
                "the container looks frozen; `docker top` and `docker logs` show what runs",
            )
        error = box.get("error")
        if error is None:
            return box["value"]
        if isinstance(error, EnvkitError):
            raise error
        why = self.diagnose()
        if why is not None:
            raise why from None
        raise EngineUnreachableError(
            f"{self.name}: the engine failed to {what} ({str(error).splitlines()[0][:200]})",
            "run verify again; if it persists, see the engine's log",
        ) from None

    def put(self, data: bytes, remote_path: str) -> None:
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w") as archive:
            info = tarfile.TarInfo(posixpath.basename(remote_path))
            info.size, info.mode = len(data), 0o644
            archive.addfile(info, io.BytesIO(data))
        directory = posixpath.dirname(remote_path)
        made = self._call("exec mkdir", 60, self.container.exec_run, ["mkdir", "-p", directory])
        if made.exit_code != 0:
            raise EngineUnreachableError(
                f"could not make {directory} in {self.name}", "check the container's /tmp"
            )
        self._call("copy files in", 120, self.container.put_archive, directory, buffer.getvalue())

    def run(self, argv: list[str], timeout: float) -> CommandResult:
        result = self._call("exec", timeout, self.container.exec_run, argv, demux=True)
        out, err = result.output
        code = result.exit_code
        if code in (126, 137, 143, -1, None):
            # exec ends this way also when the container itself died under it
            why = self._settled_diagnosis()
            if why is not None:
                raise why
        out_text, err_text = ((part or b"").decode(errors="replace") for part in (out, err))
        return CommandResult(code if code is not None else -1, out_text, err_text)

    def diagnose(self) -> EngineUnreachableError | None:
        from docker.errors import NotFound

        try:
            self.container.reload()
        except NotFound:
            return EngineUnreachableError(
                f"container {self.container.name} was removed while the checks ran",
                "`envkit up`, then verify again",
            )
        except Exception:  # the engine itself does not answer: nothing more to say
            return None
        return container_state(self.container)

    def _settled_diagnosis(self, wait: float = 3.0) -> EngineUnreachableError | None:
        """`docker kill` returns once the signal is sent: the exec may end while the engine still
        reports the container as running. Ask again for a moment before deciding it is alive."""
        deadline = time.monotonic() + wait
        while True:
            why = self.diagnose()
            if why is not None or time.monotonic() >= deadline:
                return why
            time.sleep(0.25)
