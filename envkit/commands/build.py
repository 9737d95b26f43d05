"""`envkit build`: render, then build the image with BuildKit (`docker buildx`) or the docker
SDK's classic builder, whichever --builder, build.builder or the Docker CLI decides."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from envkit.commands.project import Project, load_project, render_project
from envkit.errors import BuildFailedError, EnvkitError
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
    builder: str | None = None  # --builder; None: the config's build.builder


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


def _with_lock(project: Project, lock_file: Path | None) -> tuple[Project, Any]:
    """The project with the lock's pins, and the lock, refused before the engine is asked."""
    from envkit.lock.pins import conda_prefixes, locked_plan, read_lock

    path = lock_file or project.project_dir / LOCK_FILE
    lock, text = read_lock(path, conda_prefixes(project.plan))
    locked = locked_plan(lock, text, project.plan, path)
    return replace(project, plan=replace(project.plan, locked=locked)), lock


def run_build(request: BuildRequest) -> str:
    from envkit.engine.build import BuildOptions
    from envkit.engine.builders import build_image, choose_backend
    from envkit.engine.client import docker_client

    project = load_project(request.config, request.out)
    build_args = _args(request.build_args)
    lock = None
    if request.locked:  # every refusal comes before anything is written or the engine asked
        project, lock = _with_lock(project, request.lock_file)
    client = docker_client()
    backend = choose_backend(request.builder or project.plan.install.builder)
    if lock is not None:
        from envkit.lock.pins import check_base

        check_base(lock, client, request.lock_file or project.project_dir / LOCK_FILE)
    plan, out_dir = project.plan, project.context_dir
    render_project(project)
    tag = request.tag or plan.image.tag
    reporter = _reporter(request)
    if request.as_json:
        sys.stdout.write(json.dumps({"event": "builder", "builder": backend.name}) + "\n")
    elif not request.quiet:
        sys.stdout.write(
            f"building {tag} from {out_dir}/{backend.dockerfile} (base {plan.image.base})\n"
            f"builder: {backend.why}\n"
        )
    options = BuildOptions(
        tag=tag,
        no_cache=request.no_cache,
        build_args=build_args,
        network="host" if plan.runtime.build_network == "host" else None,
        labels={INPUTS_LABEL: inputs_digest(plan)},
    )
    try:
        progress = build_image(client, out_dir, options, reporter, backend)
    except BuildFailedError as failed:
        _explain_missing_base(client, plan.locked.base if plan.locked else plan.image.base, failed)
        raise
    if request.quiet:
        sys.stdout.write(f"{tag} {progress.image_id}\n")
    elif not request.as_json:
        sys.stdout.write(f"tagged {tag} (built by {backend.name}); next: `envkit up`\n")
    else:
        row = {"event": "tagged", "tag": tag, "image_id": progress.image_id}
        sys.stdout.write(json.dumps({**row, "builder": backend.name}) + "\n")
    return tag


def _explain_missing_base(client: Any, base: str, failed: BuildFailedError) -> None:
    """A base image that is neither on the engine nor reachable fails either builder with a
    registry error; say what is missing instead."""
    from docker.errors import DockerException, ImageNotFound

    try:
        client.images.get(base)
    except ImageNotFound:
        raise BuildFailedError(
            f"the base image {base} is not on this engine, and fetching it failed:\n  "
            + str(failed.args[0]).replace("\n", "\n  "),
            f"`docker pull {base}` where a registry answers, or `docker load` it here; "
            "or set base.image in envkit.yaml to an image the engine has (`docker images`)",
        ) from None
    except DockerException:
        return


def _reporter(request: BuildRequest) -> Any:
    from envkit.engine.progress import console_reporter, json_reporter, quiet_reporter

    if request.as_json:
        return json_reporter()
    if request.quiet:
        return quiet_reporter()
    return console_reporter(verbose=request.verbose)
