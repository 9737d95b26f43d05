"""`envkit build`: render, then build the image through the docker SDK."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from envkit.commands.project import Project, load_project, render_project
from envkit.errors import EnvkitError
from envkit.lock.requested import INPUTS_LABEL, inputs_digest

LOCK_FILE = "envkit.lock"  # beside envkit.yaml, committed with it


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
    locked: bool = False
    lock_file: Path | None = None


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


def _with_lock(project: Project, lock_file: Path | None, client: Any) -> Project:
    from envkit.lock.pins import check_base, locked_plan, read_lock

    path = lock_file or project.project_dir / LOCK_FILE
    lock, text = read_lock(path)
    locked = locked_plan(lock, text, project.plan, path)
    check_base(lock, client, path)
    return replace(project, plan=replace(project.plan, locked=locked))


def run_build(request: BuildRequest) -> str:
    from envkit.engine.build import build_image
    from envkit.engine.client import docker_client
    from envkit.engine.progress import console_reporter, json_reporter, quiet_reporter

    project = load_project(request.config, request.out)
    build_args = _args(request.build_args)
    client = docker_client()
    if request.locked:  # every refusal comes before anything is written
        project = _with_lock(project, request.lock_file, client)
    plan, out_dir = project.plan, project.context_dir
    render_project(project)
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
        labels={INPUTS_LABEL: inputs_digest(plan)},
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
