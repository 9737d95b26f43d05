"""`envkit push`: the built image to the team's registry, tagged by a digest of its inputs (and
latest), so every machine with the same envkit.yaml and lock pulls it instead of building."""

from __future__ import annotations

import sys

from envkit.engine.client import docker_client, require_image
from envkit.engine.registry import CONTEXT_LABEL, push
from envkit.errors import EnvkitError
from envkit.services.sharing import ShareRequest, prepared, say

PushRequest = ShareRequest


def run(request: PushRequest) -> int:
    project, image = prepared(request)
    client = docker_client()
    tag = project.plan.image.tag
    local = require_image(client, tag, "run `envkit build` first, then `envkit push`")
    built_from = local.labels.get(CONTEXT_LABEL)
    if built_from != image.context:
        raise EnvkitError(
            f"{tag} was not built from what envkit.yaml renders now"
            + (" (--locked: with the lock's pins)" if request.locked else ""),
            f"run `envkit build{' --locked' if request.locked else ''}` first, then push: the "
            "registry's tag must name exactly the image these inputs build",
        )
    digest = push(client, image, tag, say)
    sys.stdout.write(f"pushed {image.ref}\n")
    if digest:
        sys.stdout.write(f"by digest: {image.repository}@{digest}\n")
    return 0
