"""Which builder builds the image: BuildKit through `docker buildx build` where the Docker CLI has
the buildx plugin, else the docker SDK's classic builder. `auto` decides by asking the CLI; a
builder asked for by name and not available is an error, never a silent fallback."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from envkit.engine.build import BuildOptions, BuildProgress, Reporter
from envkit.errors import EnvkitError
from envkit.plan.image.install import CLASSIC_DOCKERFILE, DOCKERFILE
from envkit.processes import quiet_output

BackendName = Literal["buildkit", "classic"]
BUILDX_HINT = (
    "install BuildKit's client: Debian 13's docker-buildx package (`make buildx` fetches it "
    "for Debian 12), or Docker's own docker-buildx-plugin; or build with --builder classic"
)


@dataclass(frozen=True)
class Backend:
    name: BackendName
    why: str  # shown by `envkit build`: which builder, and why that one

    @property
    def dockerfile(self) -> str:
        return DOCKERFILE if self.name == "buildkit" else CLASSIC_DOCKERFILE


def buildx_version() -> str | None:
    """`docker buildx version`'s answer, or None where the CLI or its plugin is missing."""
    env = {**os.environ, "DOCKER_CLI_HINTS": "false"}
    return (quiet_output(["docker", "buildx", "version"], 20, env) or "").strip() or None


def choose_backend(requested: str, podman: bool = False) -> Backend:
    """REQUESTED is auto, buildkit or classic (config's build.builder or --builder). Podman's
    Docker-compatible API builds through buildah behind the classic build call; it serves no
    BuildKit session, so `docker buildx` cannot build there."""
    if requested == "classic":
        return Backend("classic", "the classic builder, as asked")
    if podman:
        if requested == "buildkit":
            raise EnvkitError(
                "--builder buildkit: the engine is Podman, which serves no BuildKit session",
                "build with --builder auto or classic (Podman builds with buildah through its "
                "Docker-compatible API)",
            )
        return Backend("classic", "the classic build call: the engine is Podman (buildah)")
    version = buildx_version()
    if requested == "buildkit":
        if version is None:
            raise EnvkitError("--builder buildkit: the Docker CLI here has no buildx", BUILDX_HINT)
        return Backend("buildkit", f"BuildKit, as asked ({version})")
    if version is None:
        return Backend("classic", "the classic builder: the Docker CLI here has no buildx")
    return Backend("buildkit", f"BuildKit ({version})")


def build_image(
    client: Any, context: Path, options: BuildOptions, report: Reporter, backend: Backend
) -> BuildProgress:
    """Build CONTEXT with BACKEND; both report the same events and fail the same way."""
    if backend.name == "buildkit":
        from envkit.engine.buildkit import build_with_buildkit

        return build_with_buildkit(context, options, report)
    from envkit.engine.classic import build_classic

    return build_classic(client, context, options, report)
