"""What every command on a project starts from: envkit.yaml loaded, its plan made, and the build
context's folder (.envkit beside the config)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from envkit.plan import Plan

CONTEXT_DIR = ".envkit"


def load_project(config: str | None) -> tuple[Plan, Path]:
    from envkit.config.load import load_spec
    from envkit.plan import make_plan

    loaded = load_spec(config)
    return make_plan(loaded), loaded.path.parent / CONTEXT_DIR
