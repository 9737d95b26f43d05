"""Render a Plan into files: the build context (Dockerfile, compose, mirror configs, runtime
scripts) and the project (editor configs beside envkit.yaml)."""

from envkit.render.files import (
    RenderResult,
    diff_files,
    make_environment,
    render_files,
    write_files,
)

__all__ = ["RenderResult", "diff_files", "make_environment", "render_files", "write_files"]
