"""`envkit build`: render, then build the image through the docker SDK."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

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
    from envkit.config.load import load_spec
    from envkit.engine.build import build_image
    from envkit.engine.client import docker_client
    from envkit.engine.progress import console_reporter, json_reporter, quiet_reporter
    from envkit.plan import make_plan
    from envkit.render import render_outputs, write_outputs

    loaded = load_spec(request.config)
    plan = make_plan(loaded)
    build_args = _args(request.build_args)
    out_dir = request.out if request.out is not None else loaded.path.parent / ".envkit"
    write_outputs(render_outputs(plan, out_dir, loaded.path.parent))
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
