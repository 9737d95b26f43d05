"""make_plan: every decision between a validated Spec and the rendered files."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from envkit.catalog import compat
from envkit.catalog.compat import CudaRelease, TorchRelease
from envkit.catalog.mirrors import load_presets
from envkit.config.choices import Flavor, Regressions, SlurmRuntime
from envkit.config.load import LoadedSpec
from envkit.config.model import Spec
from envkit.config.python_section import python_version
from envkit.errors import FieldError
from envkit.plan import torch as torch_decisions
from envkit.plan.access import Service, plan_services
from envkit.plan.certs import SYSTEM_BUNDLE, CaCert, plan_ca_certs
from envkit.plan.install import InstallPlan, plan_install
from envkit.plan.locked import LockedPlan
from envkit.plan.mirrors import AptPlan, CondaRc, PipPlan, plan_apt, plan_condarc, plan_pip
from envkit.plan.notebook import NotebookPlan, plan_notebook
from envkit.plan.pip_options import NETRC, OwnPip, split_pip
from envkit.plan.project_files import ProjectFiles, RequirementsLayer, read_project_files
from envkit.plan.pyproject import PythonProject, read_python_project
from envkit.plan.ssh import SshPlan, host_has_ipv6, plan_ssh
from envkit.plan.torch import TorchPlan

# Miniforge pinned by release and checksum: the installer runs as root in the build, so what
# is downloaded is checked before it runs (a "latest" URL could change under a rebuild).
# $(uname -m) is expanded by the build's shell. The sums are the release's published ones, as
# carried by independent packagers (AUR's miniforge PKGBUILD, nebari-docker-images).
MINIFORGE_VERSION = "25.3.0-3"
MINIFORGE_URL = (
    f"https://github.com/conda-forge/miniforge/releases/download/{MINIFORGE_VERSION}/"
    f"Miniforge3-{MINIFORGE_VERSION}-Linux-$(uname -m).sh"
)
MINIFORGE_SHA256 = (
    ("x86_64", "1b57f8cb991982063f79b56176881093abb1dc76d73fda32102afde60585b5a1"),
    ("aarch64", "ac89f17b0eec4e98d38a53d1ae688e0f22c77d8ea5b5f008c2455e90ef095339"),
)
CONDA_PREFIX = "/opt/conda"
VENV_PREFIX = "/opt/venv"
DEFAULT_PYTHON = "3.11"
# Where the image's Python comes from: the pytorch image's conda, Miniforge, or a venv over the
# system Python.
PythonProvider = Literal["image-conda", "miniforge", "venv"]


@dataclass(frozen=True)
class HostFacts:
    """What envkit reads off the invoking host; injected so plans are reproducible in tests."""

    uid: int
    gid: int
    ipv6: bool = True  # the host can publish on ::1

    @classmethod
    def current(cls) -> HostFacts:
        uid, gid = os.getuid(), os.getgid()
        # Root on the host would make a UID-0 login user; fall back to the usual first user.
        if uid == 0:
            uid, gid = 1000, 1000
        return cls(uid, gid, ipv6=host_has_ipv6())


@dataclass(frozen=True)
class PythonPlan:
    provider: PythonProvider
    bin_dir: str  # prepended to PATH in the image
    version: str | None  # pinned in environment.yml when envkit installs Python
    # The image's environment for this Python (PATH first), in order: data, not template branches.
    env: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class CondaPlan:
    in_image: bool  # the image has conda (pytorch base or Miniforge)
    install_miniforge: bool
    installer_url: str
    installer_sha256: tuple[tuple[str, str], ...]  # (uname -m or "*", sha256)
    update_env: bool  # run `conda env update` with environment.yml
    env_name: str
    channels: tuple[str, ...]
    dependencies: tuple[str, ...]
    pip: tuple[str, ...]
    rc: CondaRc


@dataclass(frozen=True)
class ImagePlan:
    tag: str
    flavor: Flavor
    base: str  # the FROM image
    variant: str
    labels: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class PackagesPlan:
    apt_system: tuple[str, ...]  # what envkit itself needs (Python, sshd, ...): rarely changes
    apt_user: tuple[str, ...]  # packages.apt: a layer of its own, after torch, so that adding
    #                            one rebuilds neither the Python environment nor torch
    pip: tuple[str, ...]
    requirements: tuple[RequirementsLayer, ...] = ()  # packages.requirements: a layer each
    project: PythonProject | None = None  # python.project: its pyproject.toml (and uv.lock)
    pip_own: tuple[OwnPip, ...] = ()  # packages.pip entries with options: a layer each
    netrc = NETRC  # the secret mount of the layers that ask a private index

    @property
    def private_indexes(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(p.index for p in self.pip_own if p.index))

    @property
    def apt(self) -> tuple[str, ...]:
        return self.apt_system + self.apt_user


@dataclass(frozen=True)
class RuntimePlan:
    gpus: str | int | tuple[str, ...]
    shm_size: str | None  # None with ipc_host
    ipc_host: bool
    volumes: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    restart: str
    ports: tuple[str, ...]  # runtime.ports mappings, beside the SSH port
    build_network: str
    idle_stop_s: int | None = None  # team.idle_stop: the container's activity watch stops it

    @property
    def gpus_per_node(self) -> int:
        """The config's demand as a count for a cluster's scheduler: a device list or a count as
        asked, `all` as one (a node's count is the cluster's to know: --gpus-per-node), `none`
        as none."""
        if isinstance(self.gpus, tuple):
            return len(self.gpus)
        if isinstance(self.gpus, int):
            return self.gpus
        return 1 if self.gpus == "all" else 0


@dataclass(frozen=True)
class VerifyPlan:
    require_gpu: bool
    expected_gpus: int | None
    min_shm: str
    regressions: Regressions  # what a figure below its baseline does to the exit code
    thresholds: tuple[tuple[str, float], ...]
    checks_dir: str | None  # absolute
    gpu: dict[str, object]  # verify.gpu's stated expectations; the checks' own rules elsewhere


@dataclass(frozen=True)
class SlurmPlan:
    """`envkit verify --slurm`'s defaults from the config (the command line overrides them)."""

    runtime: SlurmRuntime
    python: str
    image: str | None  # None: pyxis takes the built tag
    partition: str | None
    account: str | None
    time: str
    workdir: str  # absolute, on the shared filesystem


@dataclass(frozen=True)
class BuildStepPlan:
    run: str
    after: str  # "system" or "python"
    user: tuple[int, int] | None  # (UID, GID) of the login user; None: root


@dataclass(frozen=True)
class Plan:
    """Every decision between envkit.yaml and the rendered files, grouped by what it is about."""

    project: str
    image: ImagePlan
    cuda: CudaRelease | None
    torch: TorchPlan
    python: PythonPlan
    conda: CondaPlan
    apt: AptPlan  # mirror configuration
    pip: PipPlan  # mirror configuration
    packages: PackagesPlan
    ca_certs: tuple[CaCert, ...]
    ssh: SshPlan
    runtime: RuntimePlan
    services: tuple[Service, ...]
    verify: VerifyPlan
    slurm: SlurmPlan
    notebook: NotebookPlan
    install: InstallPlan
    notes: tuple[str, ...] = field(default=())
    members: tuple[str, ...] = field(default=())  # team.members' names, in the config's order
    locked: LockedPlan | None = None  # `envkit build --locked`: pins from envkit.lock
    registry: str | None = None  # registry: where the team's image is shared
    steps: tuple[BuildStepPlan, ...] = ()  # build.steps

    @property
    def python_installs(self) -> bool:
        """Whether a layer installs Python packages with the installer (uv is installed first)."""
        if self.locked is not None:
            return bool(self.locked.pip)  # the notebook's packages are among the lock's
        from_index = self.torch.version is not None and not self.torch.preinstalled
        packages = bool(
            self.packages.pip
            or self.packages.requirements
            or self.packages.project
            or self.packages.pip_own
        )
        return from_index or packages or self.notebook.enabled

    @property
    def conda_prefix(self) -> str | None:
        """The conda environment envkit manages (None where Python is a venv)."""
        if self.python.provider == "image-conda":
            return CONDA_PREFIX
        if self.python.provider == "miniforge":
            return f"{CONDA_PREFIX}/envs/{self.conda.env_name}"
        return None


def _python(loaded: LoadedSpec, torch: TorchRelease | None) -> PythonPlan:
    spec = loaded.spec
    if spec.base.flavor == "pytorch":
        if python_version(spec.python) is not None:
            where = ("python",) if isinstance(spec.python, str) else ("python", "version")
            raise loaded.error(
                where,
                FieldError(
                    "the pytorch/pytorch image fixes the Python version",
                    "remove python, or use base.flavor: cuda to choose it",
                ),
                python_version(spec.python),
            )
        return PythonPlan("image-conda", f"{CONDA_PREFIX}/bin", None, _path(f"{CONDA_PREFIX}/bin"))
    version = python_version(spec.python)
    wants_conda = spec.base.flavor == "cuda" or version is not None or spec.conda is not None
    if not wants_conda:
        venv_env = (*_path(f"{VENV_PREFIX}/bin"), ("VIRTUAL_ENV", VENV_PREFIX))
        return PythonPlan("venv", f"{VENV_PREFIX}/bin", None, venv_env)
    if version is None and torch is not None:
        version = DEFAULT_PYTHON if DEFAULT_PYTHON in torch.python else torch.python[-1]
    if version is not None and torch is not None:
        try:
            compat.check_python(torch, version)
        except FieldError as exc:
            raise loaded.error(("python",), exc, version) from None
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


def _conda_plan(loaded: LoadedSpec, python: PythonPlan, files: ProjectFiles) -> CondaPlan:
    spec = loaded.spec
    conda = spec.conda
    try:
        rc = plan_condarc(spec.mirrors, conda, base_has_conda=python.provider == "image-conda")
    except FieldError as exc:
        raise loaded.error(("mirrors", "preset"), exc, spec.mirrors.preset) from None
    deps = [*(conda.dependencies if conda else ()), *files.conda_dependencies, *spec.packages.conda]
    if python.version is not None:
        deps.insert(0, f"python={python.version}")
    pip = (*(conda.pip if conda else ()), *files.conda_pip)
    if pip and "pip" not in deps:
        deps.append("pip")
    in_image = python.provider in ("image-conda", "miniforge")
    custom_url = conda.installer_url if conda else None
    update = in_image and (python.provider == "miniforge" or bool(deps) or bool(pip))
    return CondaPlan(
        in_image=in_image,
        install_miniforge=python.provider == "miniforge",
        installer_url=custom_url or MINIFORGE_URL,
        installer_sha256=(
            (("*", conda.installer_sha256),)
            if custom_url and conda and conda.installer_sha256
            else MINIFORGE_SHA256
        ),
        update_env=update,
        env_name=(conda.name if conda and conda.name else spec.name),
        channels=tuple(
            dict.fromkeys((*(conda.channels if conda else ("conda-forge",)), *files.conda_channels))
        ),
        dependencies=tuple(deps),
        pip=pip,
        rc=rc,
    )


def _apt_packages(
    loaded: LoadedSpec, python: PythonPlan, conda: CondaPlan, files: ProjectFiles
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(envkit's own apt packages, the user's others)."""
    spec = loaded.spec
    wanted = ["ca-certificates"]
    if spec.ssh.enabled:
        wanted.append("openssh-server")
    if spec.ssh.sudo:
        wanted.append("sudo")
    if conda.install_miniforge:
        wanted += ["curl", "bzip2"]
    if python.provider == "venv":
        wanted += ["python3", "python3-venv"]
    system = tuple(dict.fromkeys(wanted))
    user = dict.fromkeys((*spec.packages.apt, *files.apt))
    return system, tuple(p for p in user if p not in system)


def _packages(
    loaded: LoadedSpec, python: PythonPlan, conda: CondaPlan, files: ProjectFiles, torch: str | None
) -> PackagesPlan:
    system, user = _apt_packages(loaded, python, conda, files)
    pip, own = split_pip(loaded.spec.packages.pip)
    project = read_python_project(loaded, torch)
    return PackagesPlan(system, user, pip, files.requirements, project, own)


def _notes(spec: Spec, torch: TorchRelease | None) -> list[str]:
    notes = []
    if not load_presets()[spec.mirrors.preset].documented:
        notes.append(
            f"mirror preset {spec.mirrors.preset}: its paths rest on third-party configs, "
            "not on the mirror's own help page"
        )
    if torch is not None and not torch.confirmed:
        notes.append(f"torch {torch.version}'s row in the compatibility table is not yet confirmed")
    return notes


def make_plan(loaded: LoadedSpec, host: HostFacts | None = None) -> Plan:
    spec = loaded.spec
    host = host or HostFacts.current()
    torch, cuda = torch_decisions.resolve_torch(loaded)
    base_image = torch_decisions.base_image(loaded, torch, cuda)
    python = _python(loaded, torch)
    files = read_project_files(loaded)
    conda = _conda_plan(loaded, python, files)
    torch_plan = torch_decisions.torch_plan(loaded, torch, cuda)
    apt = plan_apt(spec.mirrors)
    notes = _notes(spec, torch)
    pip = plan_pip(spec.mirrors)
    ca_certs = plan_ca_certs(loaded)
    ca_bundle = SYSTEM_BUNDLE if ca_certs else None
    ssh, ssh_notes = plan_ssh(spec, host.ipv6)
    notes += ssh_notes
    require_gpu = spec.verify.require_gpu
    if require_gpu is None:
        require_gpu = spec.runtime.gpus != "none" and spec.cuda != "cpu"
    return Plan(
        project=spec.name,
        image=ImagePlan(
            tag=f"envkit/{spec.name}:latest",
            flavor=spec.base.flavor,
            base=base_image,
            variant=spec.base.variant,
            labels=(("io.envkit.project", spec.name),),
        ),
        cuda=cuda,
        torch=torch_plan,
        python=python,
        conda=conda,
        apt=apt,
        pip=pip,
        packages=_packages(loaded, python, conda, files, torch_plan.version),
        ca_certs=ca_certs,
        ssh=ssh,
        runtime=_runtime_plan(spec),
        services=plan_services(loaded, host.uid, host.gid),
        verify=_verify_plan(loaded, require_gpu),
        slurm=_slurm_plan(loaded),
        notebook=plan_notebook(loaded.spec),
        install=plan_install(spec.build, python.bin_dir, pip, base_image, ca_bundle),
        notes=tuple(notes),
        members=tuple(m.name for m in spec.team.members),
        registry=spec.registry,
        steps=_steps(spec, host),
    )


def _steps(spec: Spec, host: HostFacts) -> tuple[BuildStepPlan, ...]:
    login = (spec.ssh.uid or host.uid, spec.ssh.gid or host.gid)
    return tuple(
        BuildStepPlan(step.run, step.after, None if step.user == "root" else login)
        for step in spec.build.steps
    )


def _runtime_plan(spec: Spec) -> RuntimePlan:
    runtime, idle_stop = spec.runtime, spec.team.idle_stop
    return RuntimePlan(
        gpus=runtime.gpus,
        shm_size=None if runtime.ipc_host else runtime.shm_size,
        ipc_host=runtime.ipc_host,
        volumes=runtime.volumes,
        env=tuple(sorted(runtime.env.items())),
        # With idle_stop, an idle container ends its own sshd (exit 0): on-failure leaves it
        # stopped and still restarts a crash; always/unless-stopped are refused by the rules.
        restart="on-failure"
        if idle_stop is not None and "restart" not in runtime.model_fields_set
        else runtime.restart,
        ports=runtime.ports,
        build_network=runtime.build_network,
        idle_stop_s=None if idle_stop is None else int(idle_stop),
    )


def _slurm_plan(loaded: LoadedSpec) -> SlurmPlan:
    slurm = loaded.spec.slurm
    workdir = Path(slurm.workdir).expanduser() if slurm.workdir else Path(".envkit/slurm")
    return SlurmPlan(
        runtime=slurm.runtime,
        python=slurm.python,
        image=slurm.image,
        partition=slurm.partition,
        account=slurm.account,
        time=slurm.time,
        workdir=str((loaded.path.parent / workdir).resolve()),
    )


def _verify_plan(loaded: LoadedSpec, require_gpu: bool) -> VerifyPlan:
    spec = loaded.spec
    checks_dir = spec.verify.checks_dir
    return VerifyPlan(
        require_gpu=require_gpu,
        expected_gpus=spec.verify.expected_gpus,
        min_shm=spec.verify.min_shm,
        regressions=spec.verify.regressions,
        thresholds=tuple(sorted(spec.verify.thresholds.items())),
        gpu=spec.verify.gpu.given(),
        checks_dir=str((loaded.path.parent / checks_dir).resolve()) if checks_dir else None,
    )
