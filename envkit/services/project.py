"""What every command on a project starts from: envkit.yaml loaded, its plan made, and the two
folders render writes to: the build context (.envkit beside the config, or --out) and the
project folder (the config's own). Commands that also work without an envkit.yaml (verify,
health, doctor) get the model's defaults instead (`configured` False), never a None. And which
of the project's containers a command means: the one in shared mode, the named member's in
per-member mode (or the only one there is), with the running container itself, or the fix."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from envkit.errors import EnvkitError

if TYPE_CHECKING:
    from envkit.config.load import LoadedSpec
    from envkit.plan import Plan
    from envkit.plan.box.access import Service
    from envkit.verify.request import ChecksRequest
    from envkit.verify.resolve import RunSettings

CONTEXT_DIR = ".envkit"
LOCK_FILE = "envkit.lock"  # beside envkit.yaml, committed with it


@dataclass(frozen=True)
class Project:
    config: Path  # the envkit.yaml that was read (or would be, when not configured)
    plan: Plan
    context_dir: Path  # the build context: rendered files the engine receives
    project_dir: Path  # beside envkit.yaml: editor configs, never sent to the engine
    loaded: LoadedSpec
    configured: bool = True  # False: no envkit.yaml, the model's defaults

    def settings(self, checks: ChecksRequest) -> RunSettings:
        """The run-time settings: the command line's `checks` over this project's."""
        from envkit.verify.resolve import resolve

        return resolve(self.plan, self.configured, checks)


def load_project(config: str | None, out: Path | None = None) -> Project:
    from envkit.config.load import load_spec

    return _project(load_spec(config), out, configured=True)


def project_or_defaults(config: str | None) -> Project:
    """The project of envkit.yaml when one is given or found (--config, $ENVKIT_CONFIG,
    ./envkit.yaml); else the model's defaults, for commands that work without one."""
    from envkit.config.load import config_given, detached

    if config_given(config):
        return load_project(config)
    return _project(detached(), None, configured=False)


def _project(loaded: LoadedSpec, out: Path | None, configured: bool) -> Project:
    from envkit.plan import make_plan

    project_dir = loaded.path.parent
    context_dir = out if out is not None else project_dir / CONTEXT_DIR
    return Project(loaded.path, make_plan(loaded), context_dir, project_dir, loaded, configured)


def render_project(project: Project) -> dict[str, str]:
    """Bring both folders up to date, as build and up do before they touch the engine: the
    build context rendered (relative path → text), for what else the command needs of it (the
    inputs digest, the build's steps), so one command renders once."""
    from envkit.render.outputs import render_outputs, write_outputs

    outputs = render_outputs(project.plan, project.context_dir, project.project_dir)
    write_outputs(outputs)
    return outputs.context


def with_lock(project: Project, lock_file: Path | None) -> tuple[Project, Any]:
    """The project with the lock's pins, and the lock, refused before the engine is asked."""
    from envkit.lock.pins import conda_prefixes, locked_plan, read_lock

    path = lock_file or project.project_dir / LOCK_FILE
    lock, text = read_lock(path, conda_prefixes(project.plan))
    locked = locked_plan(lock, text, project.plan, path)
    return replace(project, plan=replace(project.plan, locked=locked)), lock


def chosen_service(plan: Plan, member: str | None) -> Service:
    services = list(plan.services)
    names = ", ".join(s.member or s.name for s in services)
    if member is not None:
        found = [s for s in services if member in (s.member, s.name, s.container_name)]
        if not found:
            raise EnvkitError(f"{member!r} is not one of this project's containers", f"use {names}")
        return found[0]
    if len(services) > 1:
        raise EnvkitError(
            "per-member mode: every member has a container of their own", f"name one: {names}"
        )
    return services[0]


def existing_container(client: Any, service: Service) -> Any:
    from docker.errors import NotFound

    try:
        return client.containers.get(service.container_name)
    except NotFound:
        raise EnvkitError(
            f"{service.container_name} does not exist", "`envkit up` creates it"
        ) from None


def running_container(client: Any, service: Service) -> Any:
    container = existing_container(client, service)
    if container.status != "running":
        raise EnvkitError(
            f"{service.container_name} is {container.status}",
            f"`envkit start {service.member or ''}`".replace(" `", "`").strip()
            + " starts it (or `envkit up`)",
        )
    return container


def is_member(plan: Plan, word: str) -> bool:
    """Whether WORD names one of the project's containers (a member, or the shared one)."""
    return any(word in (s.member, s.name, s.container_name) for s in plan.services)
