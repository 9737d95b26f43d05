"""The plan's types: every decision between envkit.yaml and the rendered files, as plain data,
grouped by what it is about. plan/build.py makes one (`make_plan`)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Literal

from envkit.catalog.compat import CudaRelease
from envkit.config.choices import Flavor, Regressions, SlurmRuntime
from envkit.plan.box.access import Service
from envkit.plan.box.notebook import NotebookPlan
from envkit.plan.box.ssh import SshPlan, host_has_ipv6
from envkit.plan.image.certs import CaCert
from envkit.plan.image.conda_bootstrap import CondaBootstrap
from envkit.plan.image.install import InstallPlan
from envkit.plan.image.mirrors import AptPlan, CondaRc, PipPlan
from envkit.plan.image.pip_options import NETRC, OwnPip
from envkit.plan.image.torch import TorchPlan
from envkit.plan.project.conda_locks import CondaLockPackages
from envkit.plan.project.project_files import RequirementsLayer
from envkit.plan.project.pyproject import PythonProject

CONDA_PREFIX = "/opt/conda"
VENV_PREFIX = "/opt/venv"

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
    in_image: bool  # the image has conda (a pytorch base's) or gets an environment of envkit's
    bootstrap: CondaBootstrap | None  # how conda's tooling gets in; None: the base has conda
    installer_url: str
    installer_sha256: tuple[tuple[str, str], ...]  # (uname -m or "*", sha256)
    update_env: bool  # run `conda env update` with environment.yml
    env_name: str
    channels: tuple[str, ...]
    dependencies: tuple[str, ...]
    pip: tuple[str, ...]
    rc: CondaRc
    # The project's conda-lock.yml or pixi.lock: the image's platform's packages, their URLs
    # through the mirror; installed exactly in place of solving environment.yml.
    lock: CondaLockPackages | None = None
    # The pip section waits for envkit's torch (installed by pip into the new environment) and
    # installs under its constraints, in a layer of its own: run inside the solve, it would
    # bring in whatever torch its packages name first (plan/build.py).
    pip_after_torch: bool = False

    @property
    def solved_pip(self) -> tuple[str, ...]:
        """The pip section environment.yml keeps: installed with the environment's solve."""
        return () if self.pip_after_torch else self.pip

    @property
    def creates_env(self) -> bool:
        """envkit makes the environment at /opt/conda/envs/NAME (no conda in the base)."""
        return self.bootstrap is not None

    @property
    def installs_nothing(self) -> bool:
        """No conda and no pip dependencies: environment.yml says `dependencies: []`."""
        return not (self.dependencies or self.pip)


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
    # the build backend of what is installed editable at first start
    # (plan/project/editable_backend.py)
    build_backend: tuple[str, ...] = ()
    netrc = NETRC  # the secret mount of the layers that ask a private index

    @property
    def private_indexes(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(p.index for p in self.pip_own if p.index))

    @property
    def find_links(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(p.find_links for p in self.pip_own if p.find_links))

    @property
    def apt(self) -> tuple[str, ...]:
        return self.apt_system + self.apt_user


@dataclass(frozen=True)
class RuntimePlan:
    gpus: str | int | tuple[str, ...]
    shm_size: str | None  # None with ipc_host
    ipc_host: bool
    volumes: tuple[str, ...]  # as written; relative host paths are envkit.yaml's folder's
    env: tuple[tuple[str, str], ...]
    restart: str
    ports: tuple[str, ...]  # runtime.ports mappings, beside the SSH port
    build_network: str
    idle_stop_s: int | None = None  # team.idle_stop: the container's activity watch stops it
    shared_cache: bool = True  # one project volume for downloads, shared by the members

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
class WorkspacePlan:
    """The project folder, mounted into every container: the files a member works on."""

    source: str  # the host folder, absolute (on the engine's machine)
    target: str  # where it is in the container (/workspace)
    within_project: str | None  # relative to envkit.yaml's folder ('.'); None: an absolute path


@dataclass(frozen=True)
class LockedPlan:
    """What a locked build pins, as plain data the Dockerfile lays out (`envkit build --locked`).
    envkit/lock/pins.py makes it from an envkit.lock and the plan; render only places it."""

    base: str  # FROM: name@sha256:digest where the base came from a registry, else its name
    apt: tuple[str, ...]  # name=version (name:arch=version for a foreign architecture)
    conda_explicit: tuple[str, ...]  # url#md5 lines of the conda environment, in install order
    pip: tuple[str, ...]  # requirement lines: name==version, with --hash=sha256:... where known
    pip_hashed: bool  # every pip line carries its sums: install with --require-hashes
    lock_text: str  # shipped in the image for the system.lock check


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
    workspace: WorkspacePlan | None = None  # the project folder in the box
    editable: tuple[str, ...] = ()  # folders installed editable at first start (in the box)
    project_dir: str = "."  # envkit.yaml's folder, absolute: relative host paths start here
    platforms: tuple[str, ...] = ()  # platforms: linux/amd64, linux/arm64; () = the engine's
    signing_key: str | None = None  # signing.verify: the team's cosign.pub, absolute

    def login_dir(self, service: Service) -> str:
        """Where `envkit shell` and `envkit exec` start: the project's workspace, else the
        login's home (ssh.home, a mounted $HOME, or the entrypoint's /home/USER)."""
        if self.workspace is not None:
            return self.workspace.target
        return os.path.expandvars(self.ssh.home) if self.ssh.home else f"/home/{service.user}"

    @property
    def bootstraps_uv(self) -> bool:
        """Whether the image brings uv in: a layer installs Python packages with the installer
        (uv is installed first), or exports the project's uv.lock (the bundle carries its wheel
        for an offline rebuild)."""
        project = self.packages.project
        if not (self.install.uses_uv or (project is not None and project.lock is not None)):
            return False
        if self.locked is not None:
            return bool(self.locked.pip)  # the notebook's packages are among the lock's
        from_index = self.torch.version is not None and not self.torch.preinstalled
        packages = bool(
            self.packages.pip
            or self.packages.requirements
            or self.packages.project
            or self.packages.pip_own
            or self.packages.build_backend
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
