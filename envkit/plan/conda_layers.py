"""The conda layers of the image: the rattler bootstrap (py-rattler's venv and envkit-conda)
and the environment step (environment.yml solved, or an explicit list installed exactly: a
--locked build's, or the project's own conda-lock.yml or pixi.lock)."""

from __future__ import annotations

from envkit.plan.conda_bootstrap import CONDA_TOOL_DIR, RATTLER_MIN_PYTHON, RATTLER_VENV
from envkit.plan.dockerfile import CondaEnvStep, ExplicitInstall, LockPypi, RattlerStep
from envkit.plan.layer_kit import CONDA_TOOL, TORCH_CONSTRAINTS, WITHOUT_CONSTRAINTS, Layers
from envkit.plan.model import Plan

KEPT_BY_PIP = "/etc/envkit/pip-constraints.txt"  # as step 6 writes it, for conda's pip first

ENVIRONMENT_FILE = "/opt/envkit/environment.yml"
CONDA_EXPLICIT = "/opt/envkit/lock/conda-explicit.txt"
# The project's conda-lock.yml or pixi.lock, as render writes it for the build.
PROJECT_CONDA_EXPLICIT = "envkit/project/conda-explicit.txt"
PROJECT_CONDA_PYPI = "envkit/project/conda-lock-pypi.txt"


def rattler_step(layers: Layers) -> RattlerStep | None:
    """py-rattler's venv and envkit-conda, where they bootstrap conda (plan/conda_bootstrap.py)."""
    if layers.plan.conda.bootstrap != "rattler":
        return None
    install, python = layers.install, f"{RATTLER_VENV}/bin/python"
    no_cache = () if layers.buildkit else ("--no-cache-dir",)
    requirements = f"{CONDA_TOOL_DIR}/requirements.txt"
    command = (*WITHOUT_CONSTRAINTS, python, "-m", "pip", "install", *no_cache)
    command += ("--no-deps", "--require-hashes", *install.pip_indexes(), "-r", requirements)
    major, minor = RATTLER_MIN_PYTHON
    check = f"import sys; sys.exit(sys.version_info < ({major}, {minor}))"
    return RattlerStep(
        mounts=layers.mounts(install.pip_cache),
        python_check=("python3", "-c", check),
        python_needed=f"{major}.{minor}",
        venv=RATTLER_VENV,
        tool_dir=CONDA_TOOL_DIR,
        install=command,
        uv=layers.uv(python),
    )


def conda_env_step(layers: Layers) -> CondaEnvStep | None:
    plan, install, buildkit = layers.plan, layers.install, layers.buildkit
    conda = plan.conda
    if not conda.update_env:
        return None
    cuda = plan.torch.cuda
    pip = bool(conda.pip)
    pypi = _lock_pypi(layers)
    mounts = layers.mounts(install.conda_pkgs, *((install.pip_cache,) if pip or pypi else ()))
    assignments = (
        *((f"CONDA_PKGS_DIRS={install.conda_pkgs.target}",) if buildkit else ()),
        *(("PIP_CONFIG_FILE=/opt/envkit/pip.conf",) if pip else ()),
    )
    pin = None
    keep = None
    if not conda.creates_env and plan.torch.preinstalled and plan.torch.version:
        pin = f"pytorch =={plan.torch.version}"
        if pip:  # conda's pip keeps torch's numpy and CUDA libraries too, not only conda
            keep = ("python", "-c", TORCH_CONSTRAINTS)
            assignments = (*assignments, f"PIP_CONSTRAINT={KEPT_BY_PIP}")
    return CondaEnvStep(
        override_cuda=cuda if cuda and cuda != "cpu" else None,
        mounts=mounts,
        assignments=assignments,
        cached=buildkit,
        pip_section=pip,
        explicit=_explicit(plan),
        pypi=pypi,
        pin_torch=pin,
        keep_torch=keep,
        command=_env_command(plan),
        clean=None if buildkit else _conda_clean(conda.bootstrap),
    )


def _env_command(plan: Plan) -> tuple[str, ...]:
    """What makes the environment from environment.yml: envkit's own env (Miniforge's conda or
    envkit-conda), or an update of the base image's."""
    conda = plan.conda
    prefix = f"/opt/conda/envs/{conda.env_name}"
    if conda.bootstrap == "miniforge":
        return ("conda", "env", "create", "-p", prefix, "-f", ENVIRONMENT_FILE)
    if conda.bootstrap == "rattler":
        return (CONDA_TOOL, "create", "-p", prefix, "-f", ENVIRONMENT_FILE)
    return ("conda", "env", "update", "-p", "/opt/conda", "-f", ENVIRONMENT_FILE)


def _explicit(plan: Plan) -> ExplicitInstall | None:
    """envkit.lock's conda packages (a --locked build) or the project's own conda lock, as an
    explicit list installed exactly."""
    conda = plan.conda
    if plan.locked and plan.locked.conda_explicit:
        files = ("envkit/lock/conda-explicit.txt", CONDA_EXPLICIT)
        why = "The locked environment: exactly the lock's package files, no solve."
    elif conda.lock is not None:
        files = (PROJECT_CONDA_EXPLICIT, f"/opt/envkit/{PROJECT_CONDA_EXPLICIT[len('envkit/') :]}")
        why = (
            f"The project's {conda.lock.source}: its {conda.lock.platform} packages exactly, "
            "each checked against the lock's checksum, no solve."
        )
    else:
        return None
    target = str(plan.conda_prefix)
    if conda.bootstrap == "rattler":
        command: tuple[str, ...] = (CONDA_TOOL, "create", "-p", target, "--explicit", files[1])
    else:
        verb = "create" if conda.creates_env else "install"
        command = ("conda", verb, "-y", "-p", target, "--file", files[1])
    return ExplicitInstall(files[0], files[1], why, command)


def _lock_pypi(layers: Layers) -> LockPypi | None:
    """The project's conda lock's PyPI packages, by version through the pip mirror, each file
    checked against the lock's sha256 (--require-hashes), nothing else (--no-deps)."""
    plan = layers.plan
    lock = plan.conda.lock
    if lock is None or not lock.pypi or plan.locked is not None:
        return None
    python = f"{plan.conda_prefix}/bin/python"
    no_cache = () if layers.buildkit else ("--no-cache-dir",)
    command = (*WITHOUT_CONSTRAINTS, python, "-m", "pip", "install", *no_cache, "--no-deps")
    requirements = f"/opt/envkit/{PROJECT_CONDA_PYPI[len('envkit/') :]}"
    command += ("--require-hashes", *layers.install.pip_indexes(), "-r", requirements)
    return LockPypi(PROJECT_CONDA_PYPI, requirements, command)


def _conda_clean(bootstrap: str | None) -> tuple[str, ...]:
    """What removes the downloaded packages where no cache mount keeps them out of the layer."""
    if bootstrap == "rattler":
        return ("rm", "-rf", "/opt/conda/pkgs")  # envkit-conda's cache without CONDA_PKGS_DIRS
    return ("conda", "clean", "-afy")
