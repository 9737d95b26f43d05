"""What every command on a project starts from: envkit.yaml loaded, its plan made, and the two
folders render writes to: the build context (.envkit beside the config, or --out) and the
project folder (the config's own)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from envkit.config.load import LoadedSpec
    from envkit.plan import Plan

CONTEXT_DIR = ".envkit"


@dataclass(frozen=True)
class Project:
    config: Path  # the envkit.yaml that was read
    plan: Plan
    context_dir: Path  # the build context: rendered files the engine receives
    project_dir: Path  # beside envkit.yaml: editor configs, never sent to the engine
    loaded: LoadedSpec


def load_project(config: str | None, out: Path | None = None) -> Project:
    from envkit.config.load import load_spec
    from envkit.plan import make_plan

    loaded = load_spec(config)
    project_dir = loaded.path.parent
    context_dir = out if out is not None else project_dir / CONTEXT_DIR
    return Project(loaded.path, make_plan(loaded), context_dir, project_dir, loaded)


def plan_if_given(config: str | None) -> Plan | None:
    """The plan when envkit.yaml is given or found (--config, $ENVKIT_CONFIG, ./envkit.yaml);
    None for commands that also work without one (verify, health)."""
    from envkit.config.load import config_given

    return load_project(config).plan if config_given(config) else None


def render_project(project: Project) -> None:
    """Bring both folders up to date, as build and up do before they touch the engine."""
    from envkit.render import render_outputs, write_outputs

    write_outputs(render_outputs(project.plan, project.context_dir, project.project_dir))
