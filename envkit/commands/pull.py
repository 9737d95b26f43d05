"""`envkit pull`: the image these inputs build, from the team's registry, tagged as the
project's image."""

from __future__ import annotations

import sys

from envkit.engine.client import docker_client
from envkit.errors import EnvkitError
from envkit.services.sharing import (
    ShareRequest,
    build_platforms,
    fetch_shared,
    prepared,
    say,
    shared_image,
)

PullRequest = ShareRequest


def run(request: PullRequest) -> int:
    project, registry, rendered = prepared(request)
    client = docker_client()
    image = shared_image(project, registry, rendered, platforms=build_platforms(project, client))
    local = fetch_shared(client, project, image, say)
    if local is None:
        raise EnvkitError(
            f"the registry has no {image.ref}: nobody has pushed an image built from these inputs",
            "`envkit build` then `envkit push` on one machine; or `envkit build` here",
        )
    sys.stdout.write(f"pulled {image.ref} as {project.plan.image.tag} ({local.short_id})\n")
    return 0
