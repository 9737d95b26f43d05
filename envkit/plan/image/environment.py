"""Where the image's Python comes from and what goes into it: the Python provider (the pytorch
image's conda, Miniforge, or a venv over the system Python), the conda environment, and the
apt packages envkit needs beside the user's."""

from __future__ import annotations

from dataclasses import replace

from envkit.catalog import compat
from envkit.catalog.compat import TorchRelease
from envkit.config.load import LoadedSpec
from envkit.config.pip_package import PipPackage
from envkit.config.python_section import python_version
from envkit.errors import FieldError
from envkit.plan.image.conda_bootstrap import MINIFORGE_SHA256, MINIFORGE_URL, choose_bootstrap
from envkit.plan.image.mirrors import CondaRc, plan_condarc
from envkit.plan.image.pip_options import OwnPip
from envkit.plan.image.torch import DEFAULT_PYTHON, TorchPlan, cpu_python
from envkit.plan.models.plan import CONDA_PREFIX, VENV_PREFIX, CondaPlan, PackagesPlan, PythonPlan
from envkit.plan.project.conda_locks import CondaLockPackages, through_mirror
from envkit.plan.project.project_files import ProjectFiles
from envkit.plan.project.pyproject import PythonProject


def plan_python(loaded: LoadedSpec, torch: TorchRelease | None) -> PythonPlan:
    spec = loaded.spec
    if spec.base.flavor == "pytorch" and (spec.cuda != "cpu" or spec.base.image is not None):
        if python_version(spec.python) is not None:
            where = ("python",) if isinstance(spec.python, str) else ("python", "version")
            error = FieldError(
                "the pytorch/pytorch image fixes the Python version",
                "remove python, or use base.flavor: cuda to choose it",
            )
            raise loaded.error(where, error, python_version(spec.python))
        return PythonPlan("image-conda", f"{CONDA_PREFIX}/bin", None, _path(f"{CONDA_PREFIX}/bin"))
    version = python_version(spec.python)
    wants_conda = spec.base.flavor == "cuda" or version is not None or spec.conda is not None
    if not wants_conda:
        venv_env = (*_path(f"{VENV_PREFIX}/bin"), ("VIRTUAL_ENV", VENV_PREFIX))
        return PythonPlan("venv", f"{VENV_PREFIX}/bin", None, venv_env)
    if version is None and torch is not None:
        version = cpu_python(loaded, torch)  # the default, where torch supports it
    if version is not None and torch is not None:
        with loaded.blaming(("python",), version):
            compat.check_python(torch, version)
    env_name = spec.conda.name if spec.conda and spec.conda.name else spec.name
    prefix = f"{CONDA_PREFIX}/envs/{env_name}"
    env: tuple[tuple[str, str], ...] = (
        *_path(f"{prefix}/bin", f"{CONDA_PREFIX}/bin"),
        ("CONDA_DEFAULT_ENV", env_name),
        ("CONDA_PREFIX", prefix),
    )
    return PythonPlan("miniforge", f"{prefix}/bin", version or DEFAULT_PYTHON, env)


def _path(*dirs: str) -> tuple[tuple[str, str]]:
    return (("PATH", ":".join((*dirs, "$PATH"))),)


def plan_conda(
    loaded: LoadedSpec, python: PythonPlan, files: ProjectFiles, torch: TorchPlan
) -> CondaPlan:
    spec = loaded.spec
    conda = spec.conda
    with loaded.blaming(("mirrors", "preset"), spec.mirrors.preset):
        rc = plan_condarc(
            spec.mirrors,
            conda,
            base_has_conda=python.provider == "image-conda",
            file_channels=files.conda.channels,
        )
    deps = [*(conda.dependencies if conda else ()), *files.conda.dependencies, *spec.packages.conda]
    if python.version is not None:
        deps.insert(0, f"python={python.version}")
    pip = (*(conda.pip if conda else ()), *files.conda.pip)
    if pip and "pip" not in deps:
        deps.append("pip")
    in_image = python.provider in ("image-conda", "miniforge")
    custom_url = conda.installer_url if conda else None
    miniforge = python.provider == "miniforge"
    update = in_image and (miniforge or bool(deps) or bool(pip))
    lock = _routed_lock(loaded, python, files.conda.lock, rc) if files.conda.lock else None
    bootstrap = choose_bootstrap(rc.routed, custom_url is not None) if miniforge else None
    channels = _channels(
        conda.channels if conda and "channels" in conda.model_fields_set else None,
        files.conda.channels,
    )
    if bootstrap == "rattler":
        _refuse_unrouted(loaded, channels, files.conda.channels, rc)
    return CondaPlan(
        in_image=in_image,
        bootstrap=bootstrap,
        installer_url=custom_url or MINIFORGE_URL,
        installer_sha256=(
            (("*", conda.installer_sha256),)
            if custom_url and conda and conda.installer_sha256
            else MINIFORGE_SHA256
        ),
        update_env=update or lock is not None,
        env_name=(conda.name if conda and conda.name else spec.name),
        channels=channels,
        dependencies=tuple(deps),
        pip=pip,
        rc=rc,
        lock=lock,
        # envkit's own environment, whose torch pip installs after it from a plain index
        pip_after_torch=bool(pip)
        and bootstrap is not None
        and lock is None
        and bool(torch.version)
        and not torch.preinstalled,
    )


def _routed_lock(
    loaded: LoadedSpec, python: PythonPlan, lock: CondaLockPackages, rc: CondaRc
) -> CondaLockPackages:
    """The lock's packages with each URL through the mirror the .condarc routes its channel
    to; refused where the image has no environment of its own to install it into, or where the
    config's Python is not the lock's."""
    spec = loaded.spec
    if "linux/arm64" in (spec.platforms or ()):
        error = FieldError(
            f"{lock.source} is installed from its linux-64 packages; platforms: names "
            "linux/arm64, whose image would need the lock's linux-aarch64 ones",
            "build linux/arm64 from the environment.yml the lock was made from (conda.file), "
            "or keep the conda lock to platforms: [linux/amd64]",
        )
        raise loaded.error(("conda", "file"), error, lock.source)
    if python.provider != "miniforge":
        error = FieldError(
            f"{lock.source} locks a whole environment; the base image's conda would get it "
            "on top of its own packages",
            "use base.flavor cuda or custom (envkit makes the locked environment)",
        )
        raise loaded.error(("conda", "file"), error, lock.source)
    wanted = python_version(spec.python)
    if wanted and lock.python and not (lock.python + ".").startswith(wanted + "."):
        error = FieldError(
            f"{lock.source} locks Python {lock.python}; envkit.yaml asks for {wanted}",
            f'set python: "{".".join(lock.python.split(".")[:2])}", or relock',
        )
        raise loaded.error(("python",), error, wanted)
    custom = dict(rc.custom_channels)
    conda = tuple(
        (through_mirror(url, custom, rc.default_channels), sha256, md5)
        for url, sha256, md5 in lock.conda
    )
    return replace(lock, conda=conda)


def _refuse_unrouted(
    loaded: LoadedSpec, channels: tuple[str, ...], from_file: tuple[str, ...], rc: CondaRc
) -> None:
    """envkit-conda fetches a channel only through the mirror the .condarc routes it to: one
    the mirror does not serve is refused here, not at the build's solve."""
    routed = dict(rc.custom_channels)
    served = [*routed, *(["defaults"] if rc.default_channels else [])]
    for channel in channels:
        if channel in routed or "://" in channel or channel == "nodefaults":
            continue
        if channel == "defaults" and rc.default_channels:
            continue
        where = ("conda", "file") if channel in from_file else ("conda", "channels")
        named = loaded.spec.conda.file if where[1] == "file" and loaded.spec.conda else None
        error = FieldError(
            f"channel {channel!r}{f' ({named})' if named else ''} does not go through "
            f"the mirror ({rc.mirror_title}), which serves {', '.join(served)}",
            "use a channel the mirror serves, give the channel's full URL, or set "
            "mirrors.conda to a mirror that carries it",
        )
        raise loaded.error(where, error, channel)


def _channels(configured: tuple[str, ...] | None, from_file: tuple[str, ...]) -> tuple[str, ...]:
    """The channels in priority order: envkit.yaml's, then the file's; where envkit.yaml names
    none, the file's own order (its first channel is its highest priority), else conda-forge."""
    if configured:
        return tuple(dict.fromkeys((*configured, *from_file)))
    return tuple(dict.fromkeys(from_file or ("conda-forge",)))


def _apt_packages(
    loaded: LoadedSpec, python: PythonPlan, conda: CondaPlan, files: ProjectFiles, git: bool
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(envkit's own apt packages, the user's others)."""
    spec = loaded.spec
    wanted = ["ca-certificates"]
    if git:  # a git+ requirement: pip and uv clone it in the build
        wanted.append("git")
    if spec.ssh.enabled:
        wanted.append("openssh-server")
    if spec.ssh.sudo:
        wanted.append("sudo")
    if conda.bootstrap == "miniforge":
        wanted += ["curl", "bzip2"]
    if python.provider == "venv" or conda.bootstrap == "rattler":
        wanted += ["python3", "python3-venv"]
    system = tuple(dict.fromkeys(wanted))
    user = dict.fromkeys((*spec.packages.apt, *files.apt))
    return system, tuple(p for p in user if p not in system)


def plan_packages(
    loaded: LoadedSpec,
    python: PythonPlan,
    conda: CondaPlan,
    files: ProjectFiles,
    project: PythonProject | None,
    moved: frozenset[int] = frozenset(),
) -> PackagesPlan:
    """MOVED: the packages.pip entries the torch layer installs (torch's companions)."""
    git = files.needs_git or (project is not None and project.needs_git)
    system, user = _apt_packages(loaded, python, conda, files, git)
    entries = [e for i, e in enumerate(loaded.spec.packages.pip) if i not in moved]
    pip = tuple(e for e in entries if isinstance(e, str))  # one layer's worth
    own = tuple(  # the entries with options, a layer each
        OwnPip(e.name, e.no_build_isolation, e.index, e.find_links)
        for e in entries
        if isinstance(e, PipPackage)
    )
    return PackagesPlan(system, user, pip, files.requirements, project, own)
