"""What every layer of one Dockerfile shares: the plan, the builder (BuildKit's cache mounts or
none), the installer's command and uv's bootstrap."""

from __future__ import annotations

from envkit.plan.dockerfile import AptStep, PipStep, UvBootstrap
from envkit.plan.install import CacheMount
from envkit.plan.model import Plan

# A hashed install (a uv.lock, a locked build) runs without the constraints file: pip and uv
# refuse any line that is not pinned with == in --require-hashes mode, constraints included
# (numpy's major range). What it installs was solved as a whole and judged against envkit's
# torch when the plan was made (plan/torch_lines.py, plan/pyproject.py).
WITHOUT_CONSTRAINTS = ("env", "-u", "PIP_CONSTRAINT", "-u", "UV_CONSTRAINT")
CONDA_TOOL = "envkit-conda"  # on PATH in /usr/local/bin (the rattler bootstrap)


def _flags(buildkit: bool, *mounts: CacheMount) -> tuple[str, ...]:
    return tuple(mount.flag for mount in mounts) if buildkit else ()


class Layers:
    """The per-builder pieces the layers share: one plan, one builder."""

    def __init__(self, plan: Plan, buildkit: bool) -> None:
        self.plan, self.buildkit = plan, buildkit
        self.install = plan.install
        self.command = plan.install.command(buildkit)
        self.cache = _flags(buildkit, plan.install.cache)

    def mounts(self, *mounts: CacheMount) -> tuple[str, ...]:
        return _flags(self.buildkit, *mounts)

    def apt(self, packages: tuple[str, ...]) -> AptStep:
        return AptStep(packages, self.mounts(*self.install.apt_mounts), self.buildkit)

    def uv(self, python: str) -> UvBootstrap | None:
        plan = self.plan
        project = plan.packages.project
        wanted = plan.python_installs and (
            self.install.uses_uv or (project is not None and project.lock is not None)
        )
        if not wanted:
            return None
        no_cache = () if self.buildkit else ("--no-cache-dir",)
        command = (python, "-m", "pip", "install", *no_cache, *self.install.bootstrap)
        return UvBootstrap(self.install.uv_version, self.install.uv_home, command, self.buildkit)

    def pip_step(self, requirements: tuple[str, ...]) -> PipStep:
        return PipStep(self.cache, (*self.command, *self.install.indexes()), requirements)
