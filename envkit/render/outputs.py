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
    Transaction,
    diff_files,
    diff_project_files,
    remove_files,
    stage_context,
)

if TYPE_CHECKING:
    from envkit.plan import Plan


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
    stray: list[Path]  # in envkit's folders, not written by envkit: the build would copy them

    def __bool__(self) -> bool:
        return bool(self.differs or self.stale or self.stray)


def render_outputs(plan: Plan, context_dir: Path, project_dir: Path) -> Outputs:
    compose = Path(os.path.relpath(context_dir.resolve(), project_dir.resolve()))
    compose_file = (compose / "docker-compose.yml").as_posix()
    return Outputs(
        context_dir,
        project_dir,
        render_files(plan, Path(os.path.relpath(project_dir.resolve(), context_dir.resolve()))),
        devcontainer.devcontainer_files(plan, compose_file),
    )


def write_outputs(outputs: Outputs, force: bool = False) -> tuple[RenderResult, RenderResult]:
    """Both roots in one transaction: a failure anywhere leaves every file as it was."""
    txn = Transaction()
    try:
        context = stage_context(outputs.context, outputs.context_dir, txn, force)
        project = diff_project_files(outputs.project, outputs.project_dir)
        for rel in project.changed:
            txn.stage(outputs.project_dir / rel, outputs.project[rel], executable=False)
        txn.commit()
    finally:
        txn.abort()
    remove_files(outputs.context_dir, context.stale)
    remove_files(outputs.project_dir, project.stale)
    return (
        RenderResult(
            outputs.context_dir,
            tuple(context.changed + context.foreign),
            tuple(context.unchanged),
            tuple(context.stale),
            stray=tuple(context.stray),
        ),
        RenderResult(
            outputs.project_dir,
            tuple(project.changed),
            tuple(project.unchanged),
            tuple(project.stale),
            tuple(project.foreign),
        ),
    )


def drift(outputs: Outputs) -> Drift:
    """What a fresh render would change on disk (the user's own project files excepted)."""
    context = diff_files(outputs.context, outputs.context_dir)
    project = diff_project_files(outputs.project, outputs.project_dir)
    return Drift(
        [outputs.context_dir / rel for rel in context.changed + context.foreign]
        + [outputs.project_dir / rel for rel in project.changed],
        [outputs.context_dir / rel for rel in context.stale]
        + [outputs.project_dir / rel for rel in project.stale],
        [outputs.context_dir / rel for rel in context.stray],
    )
