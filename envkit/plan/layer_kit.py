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
# The constraints every later install keeps (PIP_CONSTRAINT, UV_CONSTRAINT): torch and the
# companions installed with it (the arguments), and what torch was built against as installed
# here: its nvidia-* CUDA libraries and triton at their versions, and numpy's major where numpy
# came with torch's base (an apt or conda torch is built for that major).
TORCH_CONSTRAINTS = (
    "import sys, re, importlib.metadata as m; "
    'd = {(x.metadata["Name"] or "").lower().replace("_", "-"): x.version '
    "for x in m.distributions()}; "
    't = [r for x in m.distributions() if (x.metadata["Name"] or "").lower() == "torch" '
    'for r in (x.requires or []) if "extra ==" not in r]; '
    'n = [re.split(r"[ ;<>=!~\\[(]", r, maxsplit=1)[0].lower().replace("_", "-") for r in t]; '
    'o = (sys.argv[1:] or ["torch==" + d["torch"]]) if "torch" in d else []; '
    'o += sorted({k + "==" + d[k] for k in n '
    'if k in d and (k.startswith("nvidia-") or "triton" in k)}); '
    'o += ["numpy>=%s,<%d" % (d["numpy"].split(".")[0], int(d["numpy"].split(".")[0]) + 1)] '
    'if "numpy" in d and "torch" in d else []; '
    "print(chr(10).join(o))"
)


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
