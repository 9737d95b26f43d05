"""The classic builder, through the docker SDK's build API: the fallback where the Docker CLI has
no buildx, and the builder of engines that speak only the Docker API. It builds
`Dockerfile.classic` (no cache mounts, which it cannot parse) and reports its stream's
`Step N/M` lines as the same events BuildKit's output becomes."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from envkit.engine.build import BuildOptions, BuildProgress, Reporter, begin_step, fail, finish
from envkit.errors import EngineUnreachableError
from envkit.plan.image.install import CLASSIC_DOCKERFILE

STEP = re.compile(r"^(?:Step|STEP) (\d+)/(\d+) ?: (.*)$")  # Docker's, and buildah's (Podman)
SGR = re.compile(r"\x1b\[[0-9;]*m")  # the classic builder paints a step's stderr red


def follow(stream: Iterable[dict[str, Any]], report: Reporter) -> BuildProgress:
    """Consume the engine's build stream; raise BuildFailedError on an error event."""
    progress = BuildProgress()
    for chunk in stream:
        if "error" in chunk:
            fail(progress, str(chunk.get("error", "")))
        if "aux" in chunk and isinstance(chunk["aux"], dict) and "ID" in chunk["aux"]:
            progress.image_id = chunk["aux"]["ID"]
        for line in str(chunk.get("stream", "")).splitlines():
            _line(progress, line.rstrip(), report)
    finish(progress, report)
    return progress


def _line(progress: BuildProgress, line: str, report: Reporter) -> None:
    line = SGR.sub("", line)
    if step := STEP.match(line):
        progress.total = int(step.group(2))
        begin_step(progress, int(step.group(1)), " ".join(step.group(3).split()), report)
    elif line.strip() == "---> Using cache" or line.startswith("--> Using cache "):
        progress.cached.add(progress.step)
        report("cached", progress, "")
    elif line.startswith("Successfully built "):
        progress.image_id = progress.image_id or line.split()[-1]
    elif line.strip() and not line.startswith(
        (" ---> ", "--> ", "COMMIT ", "Successfully tagged ", "Removing intermediate container")
    ):
        progress.log.append(line)
        report("output", progress, line)


def build_classic(
    client: Any, context: Path, options: BuildOptions, report: Reporter
) -> BuildProgress:
    from docker.errors import DockerException
    from requests.exceptions import RequestException
    from urllib3.exceptions import HTTPError as StreamError  # the build's stream, read raw

    try:
        stream = client.api.build(
            path=str(context),
            dockerfile=CLASSIC_DOCKERFILE,
            tag=options.tag,
            rm=True,
            forcerm=True,
            decode=True,
            nocache=options.no_cache,
            buildargs=options.build_args,
            network_mode=options.network,
            labels=options.labels,
            cache_from=list(options.cache_from) or None,
            platform=options.platform,
        )
        try:
            return follow(stream, report)
        finally:
            if (close := getattr(stream, "close", None)) is not None:
                close()
    except (DockerException, RequestException, StreamError) as exc:  # the engine broke off
        raise EngineUnreachableError(
            f"the Docker engine broke off the build: {type(exc).__name__}: {exc}",
            "check the engine (`docker info`, `journalctl -u docker`), then `envkit build` again",
        ) from None
