"""`envkit push`: the built image to the team's registry, tagged by a digest of its inputs (and
latest), so every machine with the same envkit.yaml and lock pulls it instead of building. A
multi-platform build pushes each platform's image and joins them under that one tag."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from envkit.engine.client import docker_client, require_image
from envkit.engine.registry import CONTEXT_LABEL, SharedImage, push
from envkit.errors import EnvkitError
from envkit.platforms import platform_tag
from envkit.services.project import Project
from envkit.services.sharing import (
    ShareRequest,
    build_platforms,
    local_images,
    prepared,
    say,
    shared_image,
)

if TYPE_CHECKING:
    from envkit.supply.publish import Signer


@dataclass(frozen=True, kw_only=True)
class PushRequest(ShareRequest):
    sign: Path | None = None  # --sign KEY: cosign's private key


def run(request: PushRequest) -> int:
    project, registry, rendered = prepared(request)
    client = docker_client()
    platforms = build_platforms(project, client)
    image = shared_image(project, registry, rendered, platforms=platforms)
    locals_ = local_images(project, platforms)
    if len(locals_) > 1:
        _refuse_one_platform_flags(request, platforms)
        from envkit.engine.platform_index import require_cli

        require_cli()  # before the first push: no half-published tags
    for platform, tag in locals_.items():
        _check_built(client, tag, image, request.locked, platform if len(locals_) > 1 else None)
    first = next(iter(locals_.values()))
    signer = None if request.sign is None else _signer(client, project, image, request.sign, first)
    if len(locals_) == 1:
        digest = push(client, image, first, say)
    else:
        digest = _push_platforms(client, image, locals_)
    sys.stdout.write(f"pushed {image.ref}\n")
    if digest:
        sys.stdout.write(f"by digest: {image.repository}@{digest}\n")
    if signer is not None:
        from envkit.supply.publish import sign_pushed

        sign_pushed(signer, f"{image.repository}@{digest}", say)
        sys.stdout.write(f"signed {image.repository}@{digest}\n")
    return 0


def _signer(client: Any, project: Project, image: SharedImage, key: Path, local: str) -> Signer:
    """The key opened and the statements made, before anything is pushed. The SBOM is of the
    lock a --locked build used, else of what the built image holds (read as `envkit lock`
    reads it)."""
    from envkit.checks.programs.lockfile import parse_lock
    from envkit.engine.facts import engine_facts
    from envkit.supply.publish import prepare

    locked = project.plan.locked
    if locked is not None:
        lock, text = parse_lock(locked.lock_text), locked.lock_text
    else:
        from envkit.lock.make import make_lock

        say(f"reading what {local} holds, for its SBOM")
        made = make_lock(project.plan, local)
        lock, text = made.lock, made.text
    engine = engine_facts(client).name
    return prepare(project.plan, project.config, key, lock, text, image.tag, engine)


def _refuse_one_platform_flags(request: PushRequest, platforms: tuple[str, ...]) -> None:
    """A lock, and the SBOM --sign attaches, hold one platform's packages: the images of
    several, each built from its own lock, have no one set of inputs to be named by, and an
    index of them would carry an SBOM that lies about the others."""
    builds = ", ".join(platforms)
    if request.locked:
        raise EnvkitError(
            f"--locked pushes one platform's locked image; this project builds {builds}",
            "push the locked images by platform from a config that names one of them "
            "(platforms: [P]), or push the unlocked multi-platform build",
        )
    if request.sign is not None:
        raise EnvkitError(
            f"--sign signs one platform's image with its SBOM; this project builds {builds}",
            "push and sign each platform from a config that names one (platforms: [P])",
        )


def _check_built(
    client: Any, tag: str, image: SharedImage, locked: bool, platform: str | None
) -> None:
    what = f"`envkit build{' --locked' if locked else ''}`"
    local = require_image(client, tag, f"run {what} first, then `envkit push`")
    if local.labels.get(CONTEXT_LABEL) != image.context:
        raise EnvkitError(
            f"{tag}{f' ({platform})' if platform else ''} was not built from what envkit.yaml "
            "renders now" + (" (--locked: with the lock's pins)" if locked else ""),
            f"run {what} first, then push: the registry's tag must name exactly the image "
            "these inputs build",
        )


def _push_platforms(client: Any, image: SharedImage, locals_: dict[str, str]) -> str:
    """Each platform's image under TAG-ARCH, then one manifest list under the inputs tag and
    latest: a pull on either architecture gets its own image."""
    from envkit.engine.platform_index import join

    children = []
    for platform, local in locals_.items():
        child = platform_tag(image.tag, platform)
        push(client, image, local, say, tags=(child,))
        children.append(child)
    digest = join(client, image, image.tag, children, say)
    join(client, image, "latest", children, say)
    return digest
