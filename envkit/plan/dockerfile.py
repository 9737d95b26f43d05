"""The Dockerfile as data: one typed record per builder, which Dockerfile.j2 lays out.

plan/layers.py decides (`dockerfile_model`); the template receives only a `DockerfileModel` and
tests nothing but presence: which layers exist, which flags are set, what to loop over. A new
build decision is a field here, its value there, and a line of layout in the template, and mypy
sees the decision.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Header:
    summary: str  # "pytorch, torch 2.5.1, CUDA 12.4": what the file's first comment names
    base: str  # FROM
    locked: bool
    env: tuple[tuple[str, str], ...]  # the Python environment's variables, PATH first
    ca_bundle: str | None  # every client pointed at the system bundle (extra CA certificates)
    labels: tuple[tuple[str, str], ...]
    expose_ssh: bool


@dataclass(frozen=True)
class AptStep:
    packages: tuple[str, ...]
    mounts: tuple[str, ...]  # BuildKit's cache mounts for apt's lists and archives
    cached: bool  # BuildKit: apt's own clean-up is set aside so the mounts keep the downloads


@dataclass(frozen=True)
class BuildStep:
    index: int  # its place in build.steps
    after: str  # "system" or "python"
    run: str
    user: tuple[int, int] | None  # (UID, GID) of the login user; None: root


@dataclass(frozen=True)
class SystemStep:
    apt: AptStep
    ca_certs: bool  # COPY the extra certificates, then update-ca-certificates


@dataclass(frozen=True)
class UvBootstrap:
    version: str
    home: str
    command: tuple[str, ...]  # pip installing uv from the mirror into its own folder
    cached: bool


@dataclass(frozen=True)
class MiniforgeStep:
    mounts: tuple[str, ...]
    sums: tuple[tuple[str, str], ...]  # (uname -m or "*", sha256)
    refuse_other_arch: bool  # no sum for "*": another architecture stops the build
    installer: str  # where the installer is downloaded to
    url: str
    cached: bool  # BuildKit: a download already in the cache mount is used when its sum matches
    uv: UvBootstrap | None


@dataclass(frozen=True)
class RattlerStep:
    """conda's tooling from the pip mirror (plan/conda_bootstrap.py): a venv of its own with
    py-rattler, installed by hash, and envkit-conda on every PATH."""

    mounts: tuple[str, ...]
    python_check: tuple[str, ...]  # fails where the image's python3 is too old for py-rattler
    python_needed: str  # "3.10", for the message
    venv: str
    tool_dir: str
    install: tuple[str, ...]  # pip installing the pinned, hashed requirements into the venv
    uv: UvBootstrap | None


@dataclass(frozen=True)
class PythonStep:
    """A venv over the system Python, or the base image's Python with uv added."""

    mounts: tuple[str, ...]
    uv: UvBootstrap | None


@dataclass(frozen=True)
class ExplicitInstall:
    """An environment installed from an explicit list of package files, nothing solved."""

    context_file: str  # where render writes the list in the build context
    image_file: str  # where the build copies it
    why: str  # the comment above the step: which lock it comes from
    command: tuple[str, ...]


@dataclass(frozen=True)
class LockPypi:
    """A conda lock's PyPI packages, installed by version and hash after its conda packages."""

    context_file: str
    image_file: str
    command: tuple[str, ...]


@dataclass(frozen=True)
class CondaEnvStep:
    override_cuda: str | None  # CONDA_OVERRIDE_CUDA: the build machine has no GPU
    mounts: tuple[str, ...]
    assignments: tuple[str, ...]  # variables set for the conda command alone
    cached: bool  # BuildKit: downloads in cache mounts (comment); else cleaned in the layer
    pip_section: bool  # environment.yml has a pip section: pip.conf is copied beside it
    explicit: ExplicitInstall | None  # envkit.lock's or the project's own conda lock
    pypi: LockPypi | None  # the project's conda lock's PyPI packages, by hash
    pin_torch: str | None  # the base image's torch pinned while conda solves
    # writes what that torch needs (KEPT_BY_PIP) for the pip section conda runs (PIP_CONSTRAINT)
    keep_torch: tuple[str, ...] | None
    command: tuple[str, ...]
    clean: tuple[str, ...] | None  # the classic builder: downloads removed in the same layer


@dataclass(frozen=True)
class CondaStep:
    rc_path: str
    env: CondaEnvStep | None


@dataclass(frozen=True)
class LockedPipStep:
    hashed: bool
    mounts: tuple[str, ...]
    command: tuple[str, ...]  # installs -r the lock's pip file


@dataclass(frozen=True)
class TorchStep:
    comment: tuple[str, ...]  # where torch came from, line by line
    mounts: tuple[str, ...]
    install: tuple[str, ...] | None  # None: it came with the base image or the lock
    check: tuple[str, ...] | None  # None: the image's own torch, not envkit's to check
    requirement: str  # pinned for every later install
    constrain: tuple[str, ...]  # prints the constraints file: torch, companions, what torch needs


@dataclass(frozen=True)
class RuntimeStep:
    notebook: bool
    lock: bool
    sshd: bool


@dataclass(frozen=True)
class PipStep:
    mounts: tuple[str, ...]
    command: tuple[str, ...]  # followed by -- and the requirements
    requirements: tuple[str, ...]


@dataclass(frozen=True)
class BackendStep:
    """The editable project's build backend: only what the environment lacks by name (what
    is installed stays as the layers before made it), then the installer on that list."""

    mounts: tuple[str, ...]
    missing: tuple[str, ...]  # prints the requirements whose project is not installed
    command: tuple[str, ...]  # followed by -r FILE


@dataclass(frozen=True)
class RequirementsStep:
    top: str
    includes: bool  # the file includes others (-r/-c), copied with it
    copies: tuple[tuple[str, str], ...]  # (context path, image path)
    mounts: tuple[str, ...]
    command: tuple[str, ...]  # its install, -r the file


@dataclass(frozen=True)
class ProjectLockStep:
    locked: int
    not_from_lock: str  # torch and what only torch needs, joined for the comment
    copies: tuple[str, ...]  # the context's pyproject.toml and uv.lock, then the folder
    mounts: tuple[str, ...]
    target: str
    export: tuple[str, ...]  # uv export ...
    command: tuple[str, ...]  # the hashed install


@dataclass(frozen=True)
class ProjectStep:
    pyproject: str
    extras: str
    pip: PipStep


@dataclass(frozen=True)
class OwnPipStep:
    requirement: str
    no_build_isolation: bool
    index: str | None
    index_first: bool  # uv asks the package's index first
    mounts: tuple[str, ...]
    command: tuple[str, ...]


@dataclass(frozen=True)
class NotebookStep:
    tensorboard: bool
    from_mirror: bool
    kernel: str
    display_name: str
    mounts: tuple[str, ...]
    install: tuple[str, ...] | None  # None in a locked build: the lock's pip layer has them


@dataclass(frozen=True)
class DockerfileModel:
    """Everything Dockerfile.j2 lays out, for one builder."""

    header: Header
    system: SystemStep
    steps_after_system: tuple[BuildStep, ...]
    miniforge: MiniforgeStep | None
    rattler: RattlerStep | None
    venv: PythonStep | None
    base_python: PythonStep | None
    conda: CondaStep | None
    locked_pip: LockedPipStep | None
    torch: TorchStep | None
    runtime: RuntimeStep
    user_apt: AptStep | None
    pip: PipStep | None
    requirements: tuple[RequirementsStep, ...]
    project_lock: ProjectLockStep | None
    project: ProjectStep | None
    editable_backend: BackendStep | None  # what the first start's editable install builds with
    own_pip: tuple[OwnPipStep, ...]
    notebook: NotebookStep | None
    steps_after_python: tuple[BuildStep, ...]
