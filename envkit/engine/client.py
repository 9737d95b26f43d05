"""The one way envkit reaches the Docker engine: a client with a deadline on every call, and the
labels that say which containers and volumes are envkit's."""

from __future__ import annotations

import shutil
from typing import Any

from envkit.engine.endpoint import Endpoint, current_endpoint
from envkit.errors import EngineUnreachableError

ENGINE_CALL_TIMEOUT_S = 60.0  # any engine call but a verify suite's own exec

PROJECT_LABEL = "io.envkit.project"
SERVICE_LABEL = "io.envkit.service"  # set only by `envkit up`, never by the image


def docker_client(timeout: float = ENGINE_CALL_TIMEOUT_S) -> Any:
    """A client of the engine the Docker CLI would use (DOCKER_HOST, a context, or the local
    socket). ssh:// goes through the system's `ssh`, so ~/.ssh/config and agents apply."""
    import docker  # imported here: only commands that talk to the engine pay for it
    from docker.errors import DockerException

    endpoint = current_endpoint()
    ssh = endpoint.scheme == "ssh"
    if ssh and shutil.which("ssh") is None:
        raise EngineUnreachableError(
            f"the engine at {endpoint.url} ({endpoint.source}) is reached over SSH, "
            "and this machine has no `ssh` client",
            "install OpenSSH's client (`apt install openssh-client`)",
        )
    if ssh:
        _tolerate_ended_ssh()
    try:
        if endpoint.source == "DOCKER_HOST":  # from_env also reads DOCKER_TLS_VERIFY/CERT_PATH
            client = docker.from_env(timeout=int(timeout), use_ssh_client=ssh)
        else:
            client = docker.DockerClient(
                base_url=endpoint.url, timeout=int(timeout), use_ssh_client=ssh
            )
        client.ping()
    except DockerException as exc:
        raise unreachable(endpoint, exc) from None
    return client


def _tolerate_ended_ssh() -> None:
    """The SDK's ssh:// transport closes a connection by writing to its `ssh` process, which has
    often exited already (the engine ended `docker system dial-stdio` after an exec): the
    BrokenPipeError then fails a call whose work was done (measured: every verify over ssh://).
    A connection whose process has ended is closed already: end it quietly."""
    from docker.transport import sshconn

    if getattr(sshconn.SSHSocket.close, "_envkit", False):
        return
    original = sshconn.SSHSocket.close

    def close(self: Any) -> None:
        try:
            original(self)
        except OSError:  # BrokenPipeError, and the like: the process is gone
            process = getattr(self, "proc", None)
            if process is not None and process.poll() is None:
                process.kill()

    setattr(close, "_envkit", True)  # noqa: B010 (a mark on a function object)
    sshconn.SSHSocket.close = close


def refused(exc: Exception) -> EngineUnreachableError:
    """An API call the engine answered with an error that no caller expected (a socket proxy
    that forbids /info, a Podman without an endpoint): the call, the engine, what it said."""
    response = getattr(exc, "response", None)
    request = getattr(response, "request", None)
    method = getattr(request, "method", None) or "a call"
    url = str(getattr(request, "url", "") or "")
    path = "/" + url.split("/", 3)[3] if url.count("/") >= 3 else url
    status = getattr(response, "status_code", None)
    said = " ".join(str(getattr(exc, "explanation", None) or exc).split())[:300]
    endpoint = current_endpoint()
    where = f"the engine at {endpoint.url} ({endpoint.source})"
    fix = "see the engine's log"
    if status in (401, 403):
        fix = (
            "a proxy in front of the engine's socket forbids this call: allow it (e.g. the "
            "docker-socket-proxy setting for that section), or point DOCKER_HOST at the engine"
        )
    elif status == 404:
        fix = "this engine does not offer the call: an older or a partial Docker API"
    return EngineUnreachableError(
        f"{where} refused {method} {path.split('?')[0]} ({status or 'no status'}): {said}", fix
    )


def unreachable(endpoint: Endpoint, exc: Exception) -> EngineUnreachableError:
    """The engine did not answer: say which engine, chosen how, and the fix for that kind."""
    said = " ".join(str(exc).split())[:300]
    where = f"the Docker engine at {endpoint.url} ({endpoint.source})"
    if endpoint.scheme == "ssh":
        fix = (
            f"check that `ssh {endpoint.ssh_login} docker version` works from here without a "
            "password prompt (a key in ssh-agent or ~/.ssh/config), and that the Docker CLI is "
            "installed there and its user may use the engine (the docker group)"
        )
    elif endpoint.scheme in ("tcp", "http", "https"):
        fix = (
            f"check that dockerd on {endpoint.host} listens on that port and a firewall lets "
            "you through; a TLS engine needs DOCKER_TLS_VERIFY=1 and DOCKER_CERT_PATH"
        )
    elif endpoint.context:
        fix = (
            f"the context {endpoint.context!r} points there: `docker context use default` for "
            "the local engine, or start the engine it names"
        )
    else:
        fix = (
            "start it (`sudo systemctl start docker`), check that you may use its socket "
            "(the docker group), or point DOCKER_HOST at a running engine"
        )
    return EngineUnreachableError(f"{where} does not answer: {said}", fix)


def require_image(client: Any, name: str, fix: str, what: str = "image") -> Any:
    """The engine's image `name`, or the one error envkit gives for a missing image."""
    from docker.errors import ImageNotFound

    from envkit.errors import ImageMissingError

    try:
        return client.images.get(name)
    except ImageNotFound:
        raise ImageMissingError(f"{what} {name} is not on this engine", fix) from None


def ours(project: str) -> dict[str, list[str]]:
    """Containers `envkit up` made for this project. The image carries io.envkit.project too, so
    a container someone ran by hand from it has that label; only ours have io.envkit.service."""
    return {"label": [f"{PROJECT_LABEL}={project}", SERVICE_LABEL]}


def containers(client: Any, project: str) -> list[Any]:
    """Every container `envkit up` made for the project, stopped ones included."""
    return list(client.containers.list(all=True, filters=ours(project)))


def running_containers(client: Any, project: str) -> set[str]:
    return {c.name for c in client.containers.list(filters=ours(project))}
