"""`envkit build`: render, then build the image through the docker SDK."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

from envkit.commands.project import load_project, render_project
from envkit.errors import EnvkitError


@dataclass(frozen=True)
class BuildRequest:
    config: str | None
    out: Path | None
    tag: str | None
    no_cache: bool
    build_args: tuple[str, ...]
    quiet: bool
    as_json: bool
    verbose: bool


def _args(pairs: tuple[str, ...]) -> dict[str, str]:
    parsed = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.isidentifier():
            raise EnvkitError(
                f"--build-arg {pair!r} is not KEY=VALUE", "write it as --build-arg NAME=value"
            )
        parsed[key] = value
    return parsed


def run_build(request: BuildRequest) -> str:
    from envkit.engine.build import build_image
    from envkit.engine.client import docker_client
    from envkit.engine.progress import console_reporter, json_reporter, quiet_reporter

    project = load_project(request.config, request.out)
    plan, out_dir = project.plan, project.context_dir
    build_args = _args(request.build_args)
    render_project(project)
    client = docker_client()
    tag = request.tag or plan.image.tag
    if request.as_json:
        reporter = json_reporter()
    elif request.quiet:
        reporter = quiet_reporter()
    else:
        reporter = console_reporter(verbose=request.verbose)
        sys.stdout.write(f"building {tag} from {out_dir}/Dockerfile (base {plan.image.base})\n")
    network = "host" if plan.runtime.build_network == "host" else None
    progress = build_image(
        client,
        out_dir,
        tag,
        report=reporter,
        no_cache=request.no_cache,
        build_args=build_args,
        network=network,
    )
    if request.quiet:
        sys.stdout.write(f"{tag} {progress.image_id}\n")
    elif not request.as_json:
        sys.stdout.write(f"tagged {tag}; next: `envkit up`\n")
    else:
        sys.stdout.write(
            json.dumps({"event": "tagged", "tag": tag, "image_id": progress.image_id}) + "\n"
        )
    return tag
