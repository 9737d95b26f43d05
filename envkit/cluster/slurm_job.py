"""One Slurm batch job that runs the checks suite once per node: what to ask sbatch for, and the
two scripts it runs (templates/slurm/). Pure: nothing here talks to Slurm (slurm_run.py does).

The job is ordinary Slurm: `srun --ntasks-per-node=1` starts node.sh on every node, which runs
the bundle with the node's python, inside pyxis's container (`--container-image`), or through
apptainer; on two nodes or more a second step runs torchrun across them (static rendezvous on
the first node). Reports land in a folder every node sees, one file per node."""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from envkit.checks.crossnode import CHECK_ID as CROSS_NODE
from envkit.config.slurm_fields import (
    NODE_PROGRAM_PATTERN,
    SHARED_FOLDER_PATTERN,
    SLURM_NAME_PATTERN,
    SLURM_TIME_PATTERN,
)
from envkit.errors import EnvkitError
from envkit.plan import Plan
from envkit.render.files import make_environment
from envkit.verify.run import SUITE_TIMEOUT_S, VerifySettings

RUNTIMES = ("python", "pyxis", "apptainer")
NODE_NAME = re.compile(SLURM_NAME_PATTERN)
NODE_LIST = re.compile(r"[A-Za-z0-9_.,\[\]-]{1,4096}")  # n1,n2 or Slurm's n[1-4,7]
SLURM_TIME = re.compile(SLURM_TIME_PATTERN)
PROGRAM = re.compile(NODE_PROGRAM_PATTERN)
FOLDER = re.compile(SHARED_FOLDER_PATTERN)
COLLECTIVE_LIMIT_S = 180
PORT_BASE = 29500


@dataclass(frozen=True)
class SlurmRequest:
    """`envkit verify --slurm`'s own options; None takes the config's value (or the default)."""

    nodes: int | None = None
    nodelist: str | None = None
    partition: str | None = None
    gpus_per_node: int | None = None
    time: str | None = None
    runtime: str | None = None
    wait_s: float | None = None  # how long envkit waits for the job, queueing included
    workdir: Path | None = None
    python: str | None = None  # verify --python: the interpreter on the nodes


@dataclass(frozen=True)
class SlurmJob:
    project: str
    runtime: str
    python: str
    image: str | None
    time: str  # sbatch --time
    workdir: str  # this run's own folder, on the shared filesystem
    sbatch_args: tuple[str, ...]
    step_options: tuple[str, ...]  # srun options of both steps (pyxis's container)
    gpus_per_node: int
    nproc_per_node: int
    suite_limit_s: int
    collective_limit_s: int
    config_json: str
    cross_node: bool = True  # the torchrun step: unless --only/--skip leave it out
    port_base: int = PORT_BASE

    @property
    def name(self) -> str:
        return job_name(self.project, self.workdir)

    @property
    def sbatch_line(self) -> str:
        return shlex.join(["sbatch", *self.sbatch_args, f"{self.workdir}/job.sh"])


def job_name(project: str, workdir: str) -> str:
    """Unique per run (the run folder's name), so Ctrl-C can cancel the job by name even before
    sbatch's answer, with its id, has arrived."""
    return f"envkit-verify-{project}-{Path(workdir).name}"


def time_limit_s(text: str) -> int:
    """Slurm's time formats in seconds: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S."""
    days, _, rest = text.rpartition("-")
    parts = [int(p) for p in rest.split(":")]
    if days:
        hours, minutes, seconds = ([*parts, 0, 0, 0])[:3]
    elif len(parts) == 3:
        hours, minutes, seconds = parts
    else:
        hours, (minutes, seconds) = 0, ([*parts, 0])[:2]
    return ((int(days or 0) * 24 + hours) * 60 + minutes) * 60 + seconds


def check_request(request: SlurmRequest) -> None:
    if request.nodes is not None and request.nodelist is not None:
        raise EnvkitError(
            "--nodes and --nodelist both given", "pass one: a count, or the nodes by name"
        )
    if request.nodes is not None and not 1 <= request.nodes <= 10000:
        raise EnvkitError(f"--nodes {request.nodes} is out of range", "choose 1 to 10000")
    if request.gpus_per_node is not None and not 0 <= request.gpus_per_node <= 64:
        raise EnvkitError(
            f"--gpus-per-node {request.gpus_per_node} is out of range", "choose 0 to 64"
        )
    checks = (
        ("--nodelist", request.nodelist, NODE_LIST, "n1,n2 or n[1-4]"),
        ("--partition", request.partition, NODE_NAME, "gpu"),
        ("--time", request.time, SLURM_TIME, "30:00 or 1-00:00:00"),
        ("--python", request.python, PROGRAM, "/opt/envs/vision/bin/python"),
    )
    for flag, value, pattern, example in checks:
        if value is not None and not pattern.fullmatch(value):
            raise EnvkitError(
                f"{flag} {value!r} is not valid", f"write it as Slurm does: {example}"
            )
    if request.runtime is not None and request.runtime not in RUNTIMES:
        raise EnvkitError(
            f"--slurm-runtime {request.runtime!r} is not known", f"choose {', '.join(RUNTIMES)}"
        )


def _gpus(plan: Plan | None, request: SlurmRequest) -> int:
    if request.gpus_per_node is not None:
        return request.gpus_per_node
    return plan.runtime.gpus_per_node if plan is not None else 0


def _sbatch_args(
    project: str, request: SlurmRequest, plan: Plan | None, gpus: int, workdir: str, time: str
) -> tuple[str, ...]:
    slurm = plan.slurm if plan else None
    args = [f"--job-name={job_name(project, workdir)}", f"--output={workdir}/job.out"]
    args += ["--ntasks-per-node=1", "--parsable"]
    if request.nodelist:
        args += [f"--nodelist={request.nodelist}"]
    else:
        args += [f"--nodes={request.nodes or 1}"]
    partition = request.partition or (slurm.partition if slurm else None)
    if partition:
        args.append(f"--partition={partition}")
    if slurm and slurm.account:
        args.append(f"--account={slurm.account}")
    args.append(f"--time={time}")
    if gpus:
        args.append(f"--gpus-per-node={gpus}")
    return tuple(args)


def plan_job(
    plan: Plan | None, request: SlurmRequest, settings: VerifySettings, workdir: str
) -> SlurmJob:
    """The job for this request; refuses bad options before anything is written."""
    check_request(request)
    if not FOLDER.fullmatch(workdir):
        raise EnvkitError(
            f"the run's folder {workdir!r} has characters a batch script cannot carry safely",
            "choose --workdir (or slurm.workdir) made of letters, digits and / . _ - + ~",
        )
    slurm = plan.slurm if plan else None
    runtime = request.runtime or (slurm.runtime if slurm else "python")
    image = slurm.image if slurm else None
    if runtime == "pyxis" and image is None and plan is not None:
        image = plan.image.tag
    if runtime != "python" and image is None:
        raise EnvkitError(
            f"runtime {runtime} needs an image and there is no envkit.yaml to take it from",
            "set slurm.image in envkit.yaml, or use --slurm-runtime python",
        )
    gpus = _gpus(plan, request)
    time = request.time or (slurm.time if slurm else "30:00")
    limit = time_limit_s(time)
    step: tuple[str, ...] = ()
    if runtime == "pyxis":
        step = (f"--container-image={image}", f"--container-mounts={workdir}:{workdir}")
    project = plan.project if plan else "adhoc"
    return SlurmJob(
        project=project,
        runtime=runtime,
        python=request.python or (slurm.python if slurm else "python3"),
        image=image,
        time=time,
        workdir=workdir,
        sbatch_args=_sbatch_args(project, request, plan, gpus, workdir, time),
        step_options=step,
        gpus_per_node=gpus,
        nproc_per_node=max(gpus, 1),
        # The suite gets what the job's limit leaves after the collective step.
        suite_limit_s=max(60, min(int(SUITE_TIMEOUT_S), limit - COLLECTIVE_LIMIT_S - 30)),
        collective_limit_s=COLLECTIVE_LIMIT_S,
        config_json=json.dumps(settings.runner_config("slurm", None), sort_keys=True),
        cross_node=cross_node_selected(settings),
    )


def cross_node_selected(settings: VerifySettings) -> bool:
    """The cross-node step follows --only/--skip like any check (by id or its group)."""
    names = {CROSS_NODE, CROSS_NODE.split(".")[0]}
    if settings.only and not names & set(settings.only):
        return False
    return not names & set(settings.skip)


def render_job(job: SlurmJob) -> dict[str, str]:
    """job.sh, node.sh and config.json for the run's folder."""
    from envkit import __version__

    env = make_environment()
    files = {
        name: env.get_template(f"slurm/{name}.j2").render(job=job, version=__version__)
        for name in ("job.sh", "node.sh")
    }
    files["config.json"] = job.config_json + "\n"
    return files
