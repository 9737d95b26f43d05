"""Render a Plan into files: the build context (Dockerfile, compose, mirror configs, runtime
scripts) and the project (editor configs beside envkit.yaml).

May import: plan, runtime, addresses, errors."""

from envkit.render.files import make_environment, render_files
from envkit.render.outputs import Outputs, drift, render_outputs, write_outputs
from envkit.render.write import RenderResult, diff_files

__all__ = [
    "Outputs",
    "RenderResult",
    "diff_files",
    "drift",
    "make_environment",
    "render_files",
    "render_outputs",
    "write_outputs",
]
