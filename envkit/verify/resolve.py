"""Run-time settings, resolved once: the command line over envkit.yaml over the model's defaults,
as `make_plan` does at build time. verify, health, `verify --slurm`, `k8s render` and doctor read
the one typed object this returns, so no default is spelled twice.

Without an envkit.yaml the project is the model's defaults (config/load.py's `detached`), with
one difference that is a rule, not a second default: nothing envkit built is expected of the
target (mirrors, torch build), since envkit built nothing there."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar, cast, get_args

from envkit.checks.core.contract import DEFAULT_MIN_SHM, RunnerConfig
from envkit.config.choices import Regressions, SlurmRuntime
from envkit.errors import EnvkitError
from envkit.verify.request import SUITE_TIMEOUT_S_INT, ChecksRequest, SlurmRequest

if TYPE_CHECKING:
    from envkit.plan import Plan

SUITE_TIMEOUT_S = float(SUITE_TIMEOUT_S_INT)
T = TypeVar("T")
SLURM_RUNTIMES: tuple[SlurmRuntime, ...] = get_args(SlurmRuntime)


@dataclass(frozen=True)
class VerifySettings:
    """What the checks demand; serialised as the runner's --config."""

    require_gpu: bool = False
    expected_gpus: int | None = None
    min_shm: str = DEFAULT_MIN_SHM
    thresholds: dict[str, float] = field(default_factory=dict)
    bench: bool = True
    only: tuple[str, ...] = ()
    skip: tuple[str, ...] = ()
    expected_pip_index: str | None = None
    expected_torch: str | None = None
    expected_cuda: str | None = None
    expected_apt_any: tuple[str, ...] = ()
    timeout_scale: float = 1.0
    user_checks_dir: str | None = None
    gpu: dict[str, object] = field(default_factory=dict)  # verify.gpu's expectations
    stress_s: float | None = None  # verify --stress: the burn-in's seconds
    torch: bool = True  # False: torch: none (the project has no torch; torch's checks skip)
    emulated: bool = False  # the target runs under QEMU: its figures would measure the emulator

    def runner_config(self, target: str, user_dir: str | None) -> RunnerConfig:
        """The one place the runner's settings are made (contract.RunnerConfig): every field
        under its own name (tuples as JSON lists), the user checks' folder as put on TARGET."""
        fields = {k: list(v) if isinstance(v, tuple) else v for k, v in self.__dict__.items()}
        return cast(RunnerConfig, {"target": target, **fields, "user_checks_dir": user_dir})


@dataclass(frozen=True)
class SlurmSettings:
    """`verify --slurm`'s job, every value decided."""

    runtime: SlurmRuntime
    python: str  # the interpreter on the nodes (or in their container)
    image: str | None  # the container's image; None only with the python runtime
    partition: str | None
    account: str | None
    time: str  # sbatch --time
    workdir: Path  # on the shared filesystem; each run gets a folder of its own below it
    nodes: int | None
    nodelist: str | None
    gpus_per_node: int
    wait_s: float | None
    stage: bool = False  # image is a file here, copied into the run's shared folder (--bundle)


@dataclass(frozen=True)
class RunSettings:
    project: str
    configured: bool  # an envkit.yaml was read (False: the model's defaults)
    in_environment: VerifySettings  # for targets inside the environment envkit built
    elsewhere: VerifySettings  # this machine, or any other host
    gpus: bool  # throwaway containers (--image) get the GPUs
    shm_size: str | None
    regressions: Regressions  # what a figure below its baseline does to the exit code
    containers: tuple[str, ...]  # the project's containers: what `verify` checks by default

    def checks(self, in_environment: bool) -> VerifySettings:
        return self.in_environment if in_environment else self.elsewhere


def resolve(plan: Plan, configured: bool, request: ChecksRequest) -> RunSettings:
    verify = plan.verify
    base = VerifySettings(
        require_gpu=_given(request.require_gpu, verify.require_gpu),
        expected_gpus=_given(request.expected_gpus, verify.expected_gpus),
        min_shm=verify.min_shm,
        thresholds=dict(verify.thresholds),
        bench=request.bench,
        only=request.only,
        skip=request.skip,
        user_checks_dir=verify.checks_dir,
        gpu=dict(verify.gpu),
        stress_s=request.stress_s,
        torch=not plan.torch.none,
    )
    inside = base
    if configured:  # what envkit put into the image: only there can it be expected
        inside = replace(
            base,
            expected_pip_index=plan.pip.index_url,
            expected_apt_any=tuple(f.archive_url for f in plan.apt.families),
            expected_torch=plan.torch.version,
            expected_cuda=plan.torch.cuda,
        )
    return RunSettings(
        project=plan.project,
        configured=configured,
        in_environment=inside,
        elsewhere=base,
        gpus=plan.runtime.gpus != "none",
        shm_size=plan.runtime.shm_size,
        regressions=verify.regressions,
        containers=tuple(s.container_name for s in plan.services) if configured else (),
    )


def resolve_slurm(
    plan: Plan,
    configured: bool,
    request: SlurmRequest,
    python: str | None = None,
    bundle: Path | None = None,
) -> SlurmSettings:
    slurm = plan.slurm
    runtime = _runtime(request.runtime) or slurm.runtime
    image = slurm.image
    if bundle is not None:  # its SquashFS, staged where the nodes read it
        runtime = _bundle_runtime(request.runtime, slurm.runtime)
        image = str(bundle / "rootfs.sqfs")
    elif runtime == "pyxis" and image is None and configured:
        image = plan.image.tag  # the built image, as pyxis imports it from the engine
    if runtime != "python" and image is None:
        missing = "" if configured else " and there is no envkit.yaml to take it from"
        raise EnvkitError(
            f"runtime {runtime} needs an image{missing}",
            "set slurm.image in envkit.yaml, or use --slurm-runtime python",
        )
    return SlurmSettings(
        runtime=runtime,
        python=_given(python, _bundle_python(plan, configured) if bundle else slurm.python),
        image=image,
        partition=_given(request.partition, slurm.partition),
        account=slurm.account,
        time=_given(request.time, slurm.time),
        workdir=request.workdir.expanduser().resolve() if request.workdir else Path(slurm.workdir),
        nodes=request.nodes,
        nodelist=request.nodelist,
        gpus_per_node=_given(request.gpus_per_node, plan.runtime.gpus_per_node),
        wait_s=request.wait_s,
        stage=bundle is not None,
    )


def _bundle_python(plan: Plan, configured: bool) -> str:
    """The environment's own python inside the bundle's image, by its path: only ch-run reads
    the image's environment (PATH) from a ch-convert'ed SquashFS; pyxis and Apptainer do not."""
    return f"{plan.python.bin_dir}/python" if configured else plan.slurm.python


def _bundle_runtime(asked: str | None, configured: SlurmRuntime) -> SlurmRuntime:
    """A bundle's image runs through the container runtime asked for or configured; with none,
    through Charliecloud's ch-run, which needs no daemon, no root and no import step."""
    runtime = _runtime(asked) or (configured if configured != "python" else "charliecloud")
    if runtime == "python":
        raise EnvkitError(
            "--slurm-runtime python runs the nodes' own python, never the bundle's image",
            "drop --slurm-runtime, or choose charliecloud, pyxis or apptainer",
        )
    return runtime


def _runtime(given: str | None) -> SlurmRuntime | None:
    if given is None:
        return None
    for known in SLURM_RUNTIMES:
        if known == given:
            return known
    raise EnvkitError(
        f"--slurm-runtime {given!r} is not known", f"choose {', '.join(SLURM_RUNTIMES)}"
    )


def _given(value: T | None, default: T) -> T:
    return default if value is None else value
