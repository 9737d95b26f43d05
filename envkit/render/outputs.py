"""Everything one render produces, by root: the build context (sent to the engine) and the
project folder beside envkit.yaml (editor configs, never sent to the engine)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from envkit.render import devcontainer
from envkit.render.files import render_files
from envkit.render.write import (
    RenderResult,
    diff_files,
    diff_project_files,
    write_files,
    write_project_files,
)

if TYPE_CHECKING:
    from envkit.plan import Plan

# Where envkit's earlier project files may be, for the stale check.
PROJECT_PATTERN = f"{devcontainer.FOLDER}/**/devcontainer.json"


@dataclass(frozen=True)
class Outputs:
    context_dir: Path
    project_dir: Path
    context: dict[str, str]  # relative to context_dir
    project: dict[str, str]  # relative to project_dir


@dataclass(frozen=True)
class Drift:
    differs: list[Path]
    stale: list[Path]

    def __bool__(self) -> bool:
        return bool(self.differs or self.stale)


def render_outputs(plan: Plan, context_dir: Path, project_dir: Path) -> Outputs:
    compose = Path(os.path.relpath(context_dir.resolve(), project_dir.resolve()))
    compose_file = (compose / "docker-compose.yml").as_posix()
    return Outputs(
        context_dir,
        project_dir,
        render_files(plan),
        devcontainer.devcontainer_files(plan, compose_file),
    )


def write_outputs(outputs: Outputs) -> tuple[RenderResult, RenderResult]:
    context = write_files(outputs.context, outputs.context_dir)
    project = write_project_files(
        outputs.project, outputs.project_dir, PROJECT_PATTERN, devcontainer.is_ours
    )
    return context, project


def drift(outputs: Outputs) -> Drift:
    """What a fresh render would change on disk (the user's own project files excepted)."""
    changed, _, stale = diff_files(outputs.context, outputs.context_dir)
    project = diff_project_files(
        outputs.project, outputs.project_dir, PROJECT_PATTERN, devcontainer.is_ours
    )
    return Drift(
        [outputs.context_dir / rel for rel in changed]
        + [outputs.project_dir / rel for rel in project.changed],
        [outputs.context_dir / rel for rel in stale]
        + [outputs.project_dir / rel for rel in project.stale],
    )
