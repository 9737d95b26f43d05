"""The team's image in a registry: its names there, and push, pull and "is it there" through the
engine. Credentials are the engine client's: config.json and its credential helpers, as
`docker login` left them; envkit never reads, asks for or prints one."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from envkit.errors import EngineUnreachableError, EnvkitError

CONTEXT_LABEL = "io.envkit.context"  # the digest of the build's inputs (render/digest.py)
TAG_PREFIX = "ctx-"
Say = Callable[[str], None]  # where a line for the user goes


class NotInRegistryError(EnvkitError):
    """The registry has no such tag (a pull found no manifest)."""


MISSING = ("manifest unknown", "not found", "no such image", "does not exist")


@dataclass(frozen=True)
class SharedImage:
    """REGISTRY/PROJECT, tagged ctx-<digest of the inputs> and latest."""

    repository: str
    context: str  # the full sha256 hex of the build's inputs

    @classmethod
    def of(cls, registry: str, project: str, context: str) -> SharedImage:
        return cls(f"{registry.rstrip('/')}/{project}", context)

    @property
    def tag(self) -> str:
        return inputs_tag(self.context)

    @property
    def ref(self) -> str:
        return f"{self.repository}:{self.tag}"

    @property
    def latest(self) -> str:
        return f"{self.repository}:latest"

    @property
    def registry_host(self) -> str:
        return self.repository.split("/", 1)[0]


def inputs_tag(context: str) -> str:
    """The tag naming a build's inputs. 24 hex digits (96 bits): unique per set of inputs in any
    team's registry, and short enough to read in `docker images`."""
    return TAG_PREFIX + context[:24]


def failure(image: SharedImage, action: str, message: str) -> EnvkitError:
    """One registry failure as the error envkit gives for it, by what the message says."""
    said = " ".join(message.split())[:300]
    lower = said.lower()
    host = image.registry_host
    if action == "pull" and any(w in lower for w in MISSING) and "unauthorized" not in lower:
        return NotInRegistryError(f"the registry has no {image.ref} ({said})", "push it first")
    if any(w in lower for w in ("unauthorized", "authentication required", "no basic auth")):
        return EnvkitError(
            f"{action} {image.ref}: the registry {host} wants credentials and refused this "
            f"engine's ({said})",
            f"`docker login {host}` as a member with access; envkit uses the credentials it keeps",
        )
    if "denied" in lower or "forbidden" in lower:
        return EnvkitError(
            f"{action} {image.ref}: the registry {host} denies access ({said})",
            f"ask its owner for {'push' if action == 'push' else 'pull'} rights on "
            f"{image.repository}",
        )
    if "server gave http response to https client" in lower:
        return EnvkitError(
            f"{action} {image.ref}: the registry {host} speaks plain HTTP and the engine "
            "wants HTTPS",
            f'serve it with TLS, or add "{host}" to "insecure-registries" in the engine\'s '
            "daemon.json (loopback registries are allowed already)",
        )
    if any(w in lower for w in ("connection refused", "no such host", "timeout", "i/o timeout")):
        return EngineUnreachableError(
            f"{action} {image.ref}: the registry {host} does not answer ({said})",
            f"check the address in registry: (or --registry) and that the registry runs; "
            f"`curl -sI http://{host}/v2/` from the engine's machine",
        )
    return EnvkitError(f"{action} {image.ref} failed: {said}", "see the registry's message")


def published(client: Any, image: SharedImage) -> str | None:
    """The registry's digest of IMAGE's content tag, or None where the tag is not there."""
    from docker.errors import APIError, NotFound

    try:
        data = client.images.get_registry_data(image.ref)
    except NotFound:
        return None
    except APIError as exc:
        text = str(exc.explanation or exc)
        if "manifest unknown" in text.lower() or "not found" in text.lower():
            return None
        raise failure(image, "look up", text) from None
    return str(data.id)


def _follow(stream: Iterable[dict[str, Any]], image: SharedImage, action: str, say: Say) -> str:
    """Consume a push or pull stream; one line per layer finished; the manifest digest."""
    digest = ""
    for chunk in stream:
        if "error" in chunk or "errorDetail" in chunk:
            detail = chunk.get("errorDetail") or {}
            raise failure(image, action, str(chunk.get("error") or detail.get("message")))
        status = str(chunk.get("status", ""))
        if status in ("Pushed", "Layer already exists", "Pull complete", "Already exists"):
            say(f"  {chunk.get('id', '')}: {status.lower()}")
        aux = chunk.get("aux")
        if isinstance(aux, dict) and aux.get("Digest"):
            digest = str(aux["Digest"])
        if status.startswith("Digest: "):
            digest = status.split(" ", 1)[1]
    return digest


def push(client: Any, image: SharedImage, local: str, say: Say, tags: tuple[str, ...] = ()) -> str:
    """Tag LOCAL as TAGS (default: the content tag and latest), push them; the digest of the
    last pushed manifest."""
    from docker.errors import DockerException

    found = client.images.get(local)
    digest = ""
    for tag in tags or (image.tag, "latest"):
        found.tag(image.repository, tag)
        say(f"pushing {image.repository}:{tag}")
        try:
            stream = client.images.push(image.repository, tag, stream=True, decode=True)
            digest = _follow(stream, image, "push", say) or digest
        except DockerException as exc:
            raise failure(image, "push", str(exc)) from None
    return digest


def registry_digest(local: Any, repository: str) -> str | None:
    """The digest the engine recorded when it pulled LOCAL from REPOSITORY (RepoDigests)."""
    for entry in local.attrs.get("RepoDigests") or []:
        name, _, digest = str(entry).partition("@")
        if name == repository and digest.startswith("sha256:"):
            return digest
    return None


def pull(client: Any, image: SharedImage, say: Say) -> Any:
    """Pull IMAGE's content tag; the local image."""
    from docker.errors import DockerException

    say(f"pulling {image.ref}")
    try:
        stream = client.api.pull(image.repository, image.tag, stream=True, decode=True)
        _follow(stream, image, "pull", say)
        return client.images.get(image.ref)
    except DockerException as exc:
        raise failure(image, "pull", str(exc)) from None
