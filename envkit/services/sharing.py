"""The team's image in its registry, named by a digest of its inputs, so that one build serves
every machine: what `push`, `pull`, `build` and `up` ask of the registry."""

from __future__ import annotations

import contextlib
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envkit.engine.registry import CONTEXT_LABEL, SharedImage
from envkit.errors import EnvkitError
from envkit.names import REGISTRY_REPO
from envkit.services.project import Project, load_project, render_project, with_lock

NO_REGISTRY_FIX = (
    "set registry: in envkit.yaml (e.g. registry: registry.lab.example:5000/nlp) "
    "or pass --registry HOST[:PORT][/PATH]"
)


@dataclass(frozen=True, kw_only=True)
class ShareRequest:
    """What `envkit push` and `envkit pull` are asked."""

    config: str | None = None
    registry: str | None = None  # --registry, over the config's registry:
    locked: bool = False
    lock_file: Path | None = None


def registry_of(project: Project, given: str | None) -> str | None:
    """--registry over the config's; a --registry that is no registry is refused like the field."""
    if given is None:
        return project.plan.registry
    if not REGISTRY_REPO.fullmatch(given):
        raise EnvkitError(
            f"--registry {given!r} is not a registry",
            "write it as HOST[:PORT][/PATH] (a host with a dot or a port), "
            "e.g. registry.lab.example:5000/nlp",
        )
    return given


def build_platforms(
    project: Project, client: Any | None, only: str | None = None
) -> tuple[str, ...]:
    """The platforms PROJECT's image is built for: `platforms:` in envkit.yaml, else the
    engine's own (this machine's where no engine is asked: a Slurm login node); ONLY (a
    --platform) picks one of them."""
    every = _configured_platforms(project, client)
    if only is None:
        return every
    from envkit.platforms import architecture

    chosen = architecture(only).platform
    if chosen not in every:
        raise EnvkitError(
            f"--platform {only}: this project is built for {', '.join(every)}",
            f"add {chosen} to platforms: in envkit.yaml, or pick one of those",
        )
    return (chosen,)


def _configured_platforms(project: Project, client: Any | None) -> tuple[str, ...]:
    if project.plan.platforms:
        return project.plan.platforms
    if client is not None:
        from envkit.engine.facts import engine_facts

        return (engine_facts(client).platform,)
    from envkit.platforms import this_machine

    return (this_machine(),)


def local_images(
    project: Project, platforms: tuple[str, ...], tag: str | None = None
) -> dict[str, str]:
    """Each platform's image on the engine: TAG (default: the project's) where one platform is
    built; IMAGE:TAG-ARCH each where several are (the engine's own platform also under TAG)."""
    from envkit.platforms import platform_tag

    tag = tag or project.plan.image.tag
    if len(platforms) == 1:
        return {platforms[0]: tag}
    return {platform: platform_tag(tag, platform) for platform in platforms}


def inputs_of(
    project: Project,
    rendered: dict[str, str] | None,
    build_args: dict[str, str] | None = None,
    *,
    platforms: tuple[str, ...],
) -> str:
    """The digest of what PROJECT builds from (render/digest.py), the platforms among it (one
    tag never names an amd64 image to an arm64 host): labelled on every image. RENDERED is the
    build context the command already rendered; None renders it here (a command that writes
    nothing)."""
    from envkit.render.digest import context_digest
    from envkit.render.files import render_files

    lock_text = project.plan.locked.lock_text if project.plan.locked else None
    context = rendered if rendered is not None else render_files(project.plan)
    return context_digest(context, build_args, lock_text, platforms)


def shared_image(
    project: Project,
    registry: str,
    rendered: dict[str, str] | None,
    build_args: dict[str, str] | None = None,
    *,
    platforms: tuple[str, ...],
) -> SharedImage:
    """The registry name of what PROJECT builds: same inputs, same name."""
    context = inputs_of(project, rendered, build_args, platforms=platforms)
    return SharedImage.of(registry, project.plan.project, context)


def prepared(request: ShareRequest) -> tuple[Project, str, dict[str, str]]:
    """The project (with the lock's pins where --locked), its registry, and the build context
    as render_project wrote it. Every refusal comes before the engine is asked or a file
    written."""
    project = load_project(request.config)
    registry = registry_of(project, request.registry)
    if registry is None:
        raise EnvkitError("no registry to share the image through", NO_REGISTRY_FIX)
    if request.locked:
        project, _ = with_lock(project, request.lock_file)
    return project, registry, render_project(project)


def fetch_shared(client: Any, project: Project, image: SharedImage, say: Any) -> Any | None:
    """Where the registry has IMAGE, pull it and tag it as the project's image: the local image,
    or None where the registry does not have it (then the caller builds). With signing.verify,
    only a digest the team's key signed is used."""
    local = _pull_trusted(client, project.plan.signing_key, image, say)
    if local is None:
        say(f"{image.ref} is not in the registry yet")
        return None
    if local.labels.get(CONTEXT_LABEL) != image.context:
        raise EnvkitError(
            f"{image.ref} in the registry was not built from these inputs "
            f"(its {CONTEXT_LABEL} label is {local.labels.get(CONTEXT_LABEL)!r})",
            "someone pushed another image under this tag: rebuild with `envkit build --build` "
            "and `envkit push` it",
        )
    repository, _, tag = project.plan.image.tag.rpartition(":")
    local.tag(repository, tag)
    return local


def _pull_trusted(client: Any, key: str | None, image: SharedImage, say: Any) -> Any | None:
    """IMAGE pulled, or None where the registry lacks it. With KEY, the digest is checked
    before the pull where the engine can look it up (Docker), else right after it (Podman), and
    an image refused is untagged again: nothing unsigned stays under the registry's name."""
    from envkit.engine.facts import engine_facts
    from envkit.engine.registry import NotInRegistryError, published, pull, registry_digest
    from envkit.supply.cosign import SignatureError, verify

    checked = local = None
    if engine_facts(client).podman:  # no manifest lookup there: the pull is the lookup
        with contextlib.suppress(NotInRegistryError):
            local = pull(client, image, say)
    else:
        checked = published(client, image)
        if checked is None:
            return None
        if key:
            verify(f"{image.repository}@{checked}", Path(key))
        local = pull(client, image, say)
    if key is None or local is None:
        return local
    pulled = registry_digest(local, image.repository)
    try:
        if pulled is None or (checked is not None and pulled != checked):
            raise SignatureError(
                f"signing.verify: {image.ref} changed between its check ({checked}) and its pull "
                f"({pulled})",
                "someone pushed while this pulled: run the command again",
            )
        if checked is None:
            verify(f"{image.repository}@{pulled}", Path(key))
    except SignatureError:
        client.images.remove(image.ref)
        raise
    return local


def pushed_reference(client: Any, project: Project, registry: str) -> str:
    """REPOSITORY@sha256:… of the project's image in the registry, for clusters that pull it:
    refused where it was never pushed (a pod would fail to pull)."""
    from envkit.engine.registry import published

    image = shared_image(project, registry, None, platforms=build_platforms(project, client))
    digest = published(client, image)
    if digest is None:
        raise EnvkitError(
            f"the registry has no {image.ref}: the cluster could not pull the image",
            "`envkit build` and `envkit push` first",
        )
    reference = f"{image.repository}@{digest}"
    if project.plan.signing_key:
        from envkit.supply.cosign import verify

        verify(reference, Path(project.plan.signing_key))
    return reference


def require_signed(name: str, key: str) -> None:
    """`verify --image NAME` under signing.verify: a registry digest the engine recorded for
    NAME must carry the team's signature (a digest names the content, so any of them will do)."""
    from envkit.engine.client import docker_client, require_image
    from envkit.supply.cosign import SignatureError, verify

    local = require_image(docker_client(), name, "pull it first (`envkit pull`)")
    digests = sorted(str(d) for d in local.attrs.get("RepoDigests") or [] if "@sha256:" in d)
    if not digests:
        raise SignatureError(
            f"signing.verify: {name} ({local.id}) came from no registry, so no signature can "
            "name it",
            "run the suite on the image `envkit pull` fetched, or `envkit push --sign` it first",
        )
    for reference in digests[:-1]:  # any one signed will do; the last one's refusal is said
        with contextlib.suppress(SignatureError):
            verify(reference, Path(key))
            return
    verify(digests[-1], Path(key))


def say(line: str) -> None:
    """A progress line for people, at once."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()
