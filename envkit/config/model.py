"""The envkit.yaml schema: one frozen, strictly validated `Spec` passed down through envkit.

Only shape and per-field checks live here. Decisions that need the compatibility table or the
mirror presets (which torch, which image, which URLs) are made in `envkit.plan`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from envkit.addresses import LOOPBACKS
from envkit.config.choices import (
    AptSecurity,
    Builder,
    BuildNetwork,
    CudnnMajor,
    Flavor,
    Installer,
    Kex,
    PlatformName,
    RestartPolicy,
    SlurmRuntime,
    TorchSource,
    UbuntuRelease,
    Variant,
)
from envkit.config.fields import (
    AccountId,
    AptPackage,
    BindAddresses,
    BuildCommand,
    Channel,
    Component,
    CondaSpec,
    EnvKey,
    EnvValue,
    GpuRequest,
    HostName,
    HttpUrl,
    ImageRef,
    KernelName,
    LogDir,
    LoginHome,
    MinorVersion,
    PipRequirement,
    PipVersion,
    PixiEnvironment,
    Port,
    PortMapping,
    PresetName,
    ProjectName,
    ProjectPath,
    RegistryRepo,
    Sha256,
    ShmSize,
    Strict,
    TorchVersion,
    UserName,
    Volume,
)
from envkit.config.pip_package import PipEntry
from envkit.config.python_section import PythonField
from envkit.config.slurm_fields import (
    ContainerSource,
    NodeProgram,
    SharedFolder,
    SlurmName,
    SlurmTime,
)
from envkit.config.team import Team
from envkit.config.verify_section import Verify
from envkit.config.workspace_section import Workspace, WorkspaceField
from envkit.errors import FieldError


class Base(Strict):
    """Where the image starts from."""

    flavor: Flavor = Field(
        "pytorch",
        description="pytorch: pytorch/pytorch image (torch preinstalled); cuda: nvidia/cuda image "
        "+ Miniforge + torch wheels; custom: your own `image`.",
    )
    image: ImageRef | None = Field(None, description="Explicit base image; required for custom.")
    variant: Variant = Field(
        "runtime", description="devel adds nvcc and headers (needed to compile CUDA extensions)."
    )
    ubuntu: UbuntuRelease | None = Field(
        None, description="Ubuntu release of the nvidia/cuda base (flavor cuda)."
    )

    @model_validator(mode="after")
    def _custom_needs_image(self) -> Base:
        if self.flavor == "custom" and self.image is None:
            raise FieldError(
                "flavor custom needs an image",
                "set base.image, e.g. 'debian:bookworm' or 'ubuntu:24.04'",
            )
        return self


class Packages(Strict):
    """Packages added to the image, each ecosystem in its own cached layer."""

    apt: tuple[AptPackage, ...] = Field(
        (), description="Debian/Ubuntu packages, optionally =pinned."
    )
    pip: tuple[PipEntry, ...] = Field(
        (),
        description="Installed in their own layer after the conda env and torch; an entry "
        "{name, no_build_isolation, index} gets a layer of its own with those options.",
    )
    conda: tuple[CondaSpec, ...] = Field((), description="Added to the conda environment.")
    requirements: tuple[ProjectPath, ...] = Field(
        (),
        description="pip requirements files of the project (relative to envkit.yaml; -r/-c "
        "includes and --hash kept), each installed in a layer of its own.",
    )
    apt_file: ProjectPath | None = Field(
        None, description="A file of apt package names, one per line (# comments), e.g. apt.txt."
    )


class Conda(Strict):
    """A conda environment (environment.yml, or a conda-lock.yml / pixi.lock installed exactly).
    Where the base has no conda, envkit makes it: through the mirror with envkit-conda
    (py-rattler from the pip mirror), or with Miniforge for official upstreams."""

    name: ProjectName | None = Field(
        None, description="Env name in environment.yml (default: name)."
    )
    channels: tuple[Channel, ...] = Field(
        ("conda-forge",),
        description="Ordered channels. Anaconda's `defaults` only when you list it (licence).",
    )
    dependencies: tuple[CondaSpec, ...] = Field((), description="Conda package specs.")
    pip: tuple[PipRequirement, ...] = Field((), description="The env's own pip: subsection.")
    file: ProjectPath | None = Field(
        None,
        description="The project's environment.yml (its channels, dependencies and pip: "
        "entries join the ones above), or its conda-lock.yml or pixi.lock (the image's "
        "platform's packages installed exactly, each checked by its checksum).",
    )
    environment: PixiEnvironment | None = Field(
        None, description="The pixi.lock environment installed (default: default)."
    )
    installer_url: HttpUrl | None = Field(
        None,
        description="Your own Miniforge installer (default: a pinned release, checksum checked); "
        "needs installer_sha256.",
    )
    installer_sha256: Sha256 | None = Field(
        None, description="sha256 of installer_url's file, checked before it runs as root."
    )


class Mirrors(Strict):
    """Where apt, pip and conda download from: a preset, and per-ecosystem overrides."""

    preset: PresetName = Field(
        "official", description="Mirror used for every ecosystem not overridden."
    )
    apt: HttpUrl | None = Field(
        None, description="Base URL serving /debian, /debian-security, /ubuntu, /ubuntu-ports."
    )
    pip: HttpUrl | None = Field(None, description="PyPI simple index URL.")
    conda: HttpUrl | None = Field(
        None, description="Anaconda mirror root serving pkgs/main, pkgs/r and cloud/<channel>."
    )
    pytorch_index: HttpUrl | None = Field(
        None, description="Index torch wheels come from (default download.pytorch.org/whl/cuXYZ)."
    )
    extra_index_urls: tuple[HttpUrl, ...] = Field(
        (), description="More pip indexes (pip merges them: only list ones you trust fully)."
    )
    trusted_hosts: tuple[HostName, ...] = Field(
        (), description="Hosts pip may reach over plain http or with bad TLS."
    )
    apt_security: AptSecurity = Field(
        "official",
        description="Security updates from the official host (mirrors lag) or from the mirror.",
    )
    ca_certificates: tuple[str, ...] = Field(
        (),
        description="Extra CA certificates (.crt/.pem files, relative to envkit.yaml) trusted "
        "in the build and the container, e.g. a TLS-inspecting corporate proxy's CA.",
    )
    debian_components: tuple[Component, ...] = Field(("main",), description="Debian components.")
    ubuntu_components: tuple[Component, ...] = Field(
        ("main", "restricted", "universe", "multiverse"), description="Ubuntu components."
    )


class Forwarding(Strict):
    """What SSH sessions may forward. Defaults suit a dev box: port forwards (`ssh -L`, VS Code
    Remote-SSH) on; agent and Unix-socket forwarding off unless asked."""

    tcp: bool = Field(True, description="TCP port forwarding (ssh -L/-R; VS Code needs it).")
    agent: bool = Field(False, description="Agent forwarding (ssh -A): your keys usable from it.")
    unix_sockets: bool = Field(False, description="Unix-domain socket forwarding.")


class Ssh(Strict):
    """SSH access: keys only, no root; the user is created at container start."""

    enabled: bool = Field(True, description="Run a hardened sshd in the container.")
    port: Port = Field(8822, description="Host port mapped to the container's sshd.")
    bind: BindAddresses = Field(
        LOOPBACKS,
        description="Host addresses the port is published on, IPv4 and IPv6 (one or a list). "
        "The default, both loopbacks, keeps sshd off the network (reach it with `ssh -J HOST` or "
        "`envkit ssh-config --host HOST`; a host without IPv6 gets 127.0.0.1 alone); "
        "[0.0.0.0, '::'] publishes on every interface like a bare `8822:22` (Docker's published "
        "ports bypass host firewalls).",
    )
    kex: Kex = Field(
        "post-quantum",
        description="post-quantum: only hybrid post-quantum key exchanges where the image's "
        "OpenSSH has them (clients need OpenSSH >= 8.5); compatible: classical ones too, for "
        "older clients.",
    )
    forwarding: Forwarding = Field(Forwarding(), description="What sessions may forward.")
    user: UserName = Field("dev", description="Login user created at container start.")
    uid: AccountId | None = Field(None, description="Default: the invoking user's UID.")
    gid: AccountId | None = Field(None, description="Default: the invoking user's GID.")
    home: LoginHome | None = Field(
        None,
        description="Where a login lands. Default: where runtime.volumes mounts your home "
        "(`$HOME:$HOME` gives your home's own path), else /home/USER.",
    )
    sudo: bool = Field(True, description="Passwordless sudo for the login user.")
    allow_no_keys: bool = Field(
        False,
        description="Accept a config with no public key at all (nobody can log in until keys "
        "are added; `envkit doctor` warns).",
    )
    authorized_keys: tuple[str, ...] = Field((), description="Public key lines.")
    authorized_key_files: tuple[str, ...] = Field(
        (), description=".pub files, relative to envkit.yaml; '~' is expanded."
    )


class Runtime(Strict):
    """How containers run: GPUs, shared memory, volumes, environment, ports."""

    gpus: GpuRequest = Field("all", description="all | none | a count | a list of device ids.")
    shm_size: ShmSize = Field(
        "16gb", description="Size of /dev/shm (Docker's default of 64 MB is too small)."
    )
    ipc_host: bool = Field(False, description="Share the host's IPC namespace instead of shm_size.")
    volumes: tuple[Volume, ...] = Field((), description="HOST:CONTAINER[:ro]; $HOME is expanded.")
    env: dict[EnvKey, EnvValue] = Field(
        default_factory=dict, description="Environment of the container and of SSH sessions."
    )
    restart: RestartPolicy = Field("unless-stopped", description="Docker restart policy.")
    ports: tuple[PortMapping, ...] = Field(
        (), description="Extra [ADDRESS:]HOST:CONTAINER ports; ADDRESS may be IPv6 in brackets."
    )
    build_network: BuildNetwork = Field(
        "default", description="host lets builds reach a mirror or proxy on the host's loopback."
    )
    shared_cache: bool = Field(
        True,
        description="One volume of the project's for downloaded models, datasets and package "
        "caches (HF_HOME, TORCH_HOME, XDG_CACHE_HOME point there), shared by the members.",
    )

    @model_validator(mode="after")
    def _shm_or_ipc(self) -> Runtime:
        if self.ipc_host and "shm_size" in self.model_fields_set:
            raise FieldError(
                "shm_size has no effect with ipc_host: true (the host's /dev/shm is used)",
                "remove runtime.shm_size or set ipc_host: false",
            )
        return self


class TensorBoard(Strict):
    """TensorBoard beside JupyterLab, published the same way (it has no login of its own)."""

    enabled: bool = Field(False, description="Run TensorBoard, supervised like JupyterLab.")
    version: PipVersion = Field("2.21.0", description="tensorboard release, from the pip mirror.")
    logdir: LogDir = Field("runs", description="Log folder, relative to the login home.")
    port: Port = Field(6006, description="Host port (per-member mode: derived from it).")


class Notebook(Strict):
    """JupyterLab served from the environment, the environment's Python as a named kernel."""

    enabled: bool = Field(False, description="Serve JupyterLab from every container.")
    jupyterlab: PipVersion = Field("4.6.6", description="jupyterlab release, from the pip mirror.")
    port: Port = Field(8888, description="Host port (per-member mode: derived from it).")
    bind: BindAddresses = Field(
        ("127.0.0.1",),
        description="Host addresses the notebook (and TensorBoard) ports are published on. The "
        "default keeps them off the network: reach them through the SSH tunnel that "
        "`envkit ssh-config` prints (LocalForward). Others make `envkit doctor` warn.",
    )
    kernel: KernelName | None = Field(
        None, description="The kernel's name (default: the project's name)."
    )
    tensorboard: TensorBoard = TensorBoard()


class BuildStep(Strict):
    """A command of the project's, run at build time in a layer of its own."""

    run: BuildCommand = Field(description="A bash command line, e.g. 'make -C tools install'.")
    after: Literal["system", "python"] = Field(
        "python",
        description="system: after the system packages (a change rebuilds the Python layers); "
        "python: after every package (a change rebuilds only the steps).",
    )
    user: Literal["root", "login"] = Field(
        "root", description="root, or the login user's UID/GID (ssh.uid/gid, else yours)."
    )


class Build(Strict):
    """How the image is built: the Python installer in the image and the engine's builder."""

    installer: Installer = Field(
        "uv",
        description="uv (from the pip index, so the mirror: parallel downloads, a cache across "
        "builds) or pip installs torch and your Python packages; /etc/pip.conf stays what `pip "
        "install` reads inside the box either way.",
    )
    uv: PipVersion = Field("0.13.9", description="uv release, from the pip mirror.")
    builder: Builder = Field(
        "auto",
        description="buildkit (`docker buildx build`: cache mounts, so a rebuilt layer downloads "
        "nothing it already has), classic (the docker SDK's builder), or auto: BuildKit where "
        "the Docker CLI has buildx, else classic. `envkit build --builder` overrides it.",
    )
    steps: tuple[BuildStep, ...] = Field(
        (), max_length=32, description="The project's own build steps (repo2docker's postBuild)."
    )


class Signing(Strict):
    """Which images this team runs: only those its lead signed (`envkit push --sign KEY`)."""

    verify: ProjectPath | None = Field(
        None,
        description="The team's cosign public key (cosign.pub), relative to envkit.yaml: `pull`, "
        "`up` and `verify --image` then refuse an image from the registry that this key did not "
        "sign, naming its digest.",
    )


class Slurm(Strict):
    """How `envkit verify --slurm` runs the suite through the cluster's scheduler."""

    runtime: SlurmRuntime = Field(
        "python",
        description="Where the suite runs on each node: python (the node's own interpreter, "
        "slurm.python), pyxis (srun --container-image, enroot), apptainer (apptainer or "
        "singularity exec of slurm.image) or charliecloud (ch-run of slurm.image, a SquashFS "
        "or unpacked image; what `verify --slurm --bundle` uses).",
    )
    python: NodeProgram = Field(
        "python3", description="Interpreter with torch: on the node, or inside the container."
    )
    image: ContainerSource | None = Field(
        None,
        description="pyxis: an image reference or .sqsh file (default: the built tag); "
        "apptainer: a .sif file or docker://IMAGE (required); charliecloud: a SquashFS file "
        "or an image folder (required).",
    )
    partition: SlurmName | None = Field(None, description="sbatch --partition.")
    account: SlurmName | None = Field(None, description="sbatch --account.")
    time: SlurmTime = Field("30:00", description="sbatch --time: the job's limit.")
    workdir: SharedFolder | None = Field(
        None,
        description="A folder every node sees (shared filesystem) for the run's bundle, "
        "logs and reports. Default: .envkit/slurm beside envkit.yaml.",
    )

    @model_validator(mode="after")
    def _runtime_needs_image(self) -> Slurm:
        made_by = {
            "apptainer": "the environment's .sif file (apptainer build env.sif "
            "docker-daemon://IMAGE)",
            "charliecloud": "the environment's SquashFS (a bundle's rootfs.sqfs; or pass "
            "--bundle DIR to verify)",
        }
        if self.runtime in made_by and self.image is None:
            raise FieldError(
                f"runtime {self.runtime} needs slurm.image",
                f"set slurm.image to {made_by[self.runtime]}",
            )
        return self


class Spec(Strict):
    """The whole of envkit.yaml."""

    name: ProjectName = Field(description="Names the image, containers and compose project.")
    base: Base = Base()
    python: PythonField | None = Field(
        None,
        description="Python for flavors cuda/custom (Miniforge): '3.11'; or {version, project, "
        "extras} to install the project's pyproject.toml (uv.lock exactly).",
    )
    torch: TorchVersion | None = Field(
        None, description="torch release, e.g. '2.5.1' ('2.5' = newest 2.5.x); see `envkit compat`."
    )
    cuda: MinorVersion | None = Field(
        None, description="CUDA of the torch build, e.g. '12.4', or 'cpu'. Default: PyPI's build."
    )
    cudnn: CudnnMajor | None = Field(None, description="Checked against the base image.")
    platforms: list[PlatformName] | None = Field(
        None,
        min_length=1,
        description="The platforms the image is built for: linux/amd64 (x86 servers), "
        "linux/arm64 (Grace: GH200, GB200, DGX Spark). Default: the engine's own. Each is built "
        "(natively or under QEMU) and `envkit push` joins them under one tag.",
    )
    torch_source: TorchSource = Field(
        "auto",
        description="Where torch wheels come from: pypi (the pip index in pip.conf, so the mirror "
        "preset's PyPI; PyPI's plain torch wheel is one CUDA build per release), pytorch-index "
        "(download.pytorch.org/whl/cuXYZ or mirrors.pytorch_index; every build), or auto: pypi "
        "when the wanted CUDA is PyPI's build, else pytorch-index.",
    )
    packages: Packages = Packages()
    conda: Conda | None = None
    mirrors: Mirrors = Mirrors()
    ssh: Ssh = Ssh()
    runtime: Runtime = Runtime()
    workspace: WorkspaceField = Field(
        Workspace(),
        description="The project folder in every container: {path, target, enabled}, or a path, "
        "or false.",
    )
    team: Team = Team()
    verify: Verify = Verify()
    notebook: Notebook = Notebook()
    slurm: Slurm = Slurm()
    build: Build = Build()
    registry: RegistryRepo | None = Field(
        None,
        description="Where the team's image is shared, HOST[:PORT][/PATH] (docs/engines.md); "
        "credentials come from `docker login`, never from this file.",
    )
    signing: Signing = Signing()
