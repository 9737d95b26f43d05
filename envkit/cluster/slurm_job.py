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

from envkit.checks.programs.crossnode import CHECK_ID as CROSS_NODE
from envkit.config.choices import SlurmRuntime
from envkit.config.slurm_fields import (
    NODE_PROGRAM_PATTERN,
    SHARED_FOLDER_PATTERN,
    SLURM_NAME_PATTERN,
    SLURM_TIME_PATTERN,
)
from envkit.errors import EnvkitError
from envkit.render.files import make_environment
from envkit.verify.resolve import SUITE_TIMEOUT_S, SlurmSettings, VerifySettings

NODE_NAME = re.compile(SLURM_NAME_PATTERN)
# n1,n2 or Slurm's n[1-4,7]; never starting with '-', which sinfo and scontrol would take for
# an option.
NODE_LIST = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.,\[\]-]{0,4095}")
SLURM_TIME = re.compile(SLURM_TIME_PATTERN)
PROGRAM = re.compile(NODE_PROGRAM_PATTERN)
FOLDER = re.compile(SHARED_FOLDER_PATTERN)
COLLECTIVE_LIMIT_S = 180
PORT_BASE = 29500


@dataclass(frozen=True)
class SlurmJob:
    project: str
    runtime: SlurmRuntime
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
    staged_from: str | None = None  # a bundle's SquashFS, copied to `image` before sbatch

    @property
    def name(self) -> str:
        return job_name(self.project, self.workdir)

    @property
    def in_apptainer(self) -> bool:
        """node.sh runs the python inside the image through apptainer (or singularity)."""
        return self.runtime == "apptainer"

    @property
    def in_charliecloud(self) -> bool:
        """node.sh runs the python inside the image through Charliecloud's ch-run."""
        return self.runtime == "charliecloud"

    @property
    def python_on_path(self) -> bool:
        """node.sh finds slurm.python on the node's PATH (or pyxis's container's) itself."""
        return self.runtime in ("python", "pyxis")

    @property
    def python_where(self) -> str:
        """Where node.sh looks for the python, in words ("... is not on the PATH <this> $node")."""
        return "inside the container" if self.runtime == "pyxis" else "of"

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


def check_settings(slurm: SlurmSettings) -> None:
    """Refuses what no Slurm command may see. The config's values were checked by the model
    already; what fails here came from the command line, so the messages name its flags."""
    if slurm.nodes is not None and slurm.nodelist is not None:
        raise EnvkitError(
            "--nodes and --nodelist both given", "pass one: a count, or the nodes by name"
        )
    if slurm.nodes is not None and not 1 <= slurm.nodes <= 10000:
        raise EnvkitError(f"--nodes {slurm.nodes} is out of range", "choose 1 to 10000")
    if not 0 <= slurm.gpus_per_node <= 64:
        raise EnvkitError(
            f"--gpus-per-node {slurm.gpus_per_node} is out of range", "choose 0 to 64"
        )
    checks = (
        ("--nodelist", slurm.nodelist, NODE_LIST, "n1,n2 or n[1-4]"),
        ("--partition", slurm.partition, NODE_NAME, "gpu"),
        ("--time", slurm.time, SLURM_TIME, "30:00 or 1-00:00:00"),
        ("--python", slurm.python, PROGRAM, "/opt/envs/vision/bin/python"),
    )
    for flag, value, pattern, example in checks:
        if value is not None and not pattern.fullmatch(value):
            raise EnvkitError(
                f"{flag} {value!r} is not valid", f"write it as Slurm does: {example}"
            )
    if slurm.runtime == "charliecloud" and slurm.gpus_per_node:
        raise EnvkitError(
            "ch-run cannot give a read-only SquashFS the nodes' NVIDIA driver",
            "on GPU nodes choose --slurm-runtime pyxis (enroot's hook adds the driver) or "
            "apptainer (--nv); or pass --gpus-per-node 0",
        )


def _sbatch_args(project: str, slurm: SlurmSettings, workdir: str) -> tuple[str, ...]:
    args = [f"--job-name={job_name(project, workdir)}", f"--output={workdir}/job.out"]
    args += ["--ntasks-per-node=1", "--parsable"]
    args += [f"--nodelist={slurm.nodelist}"] if slurm.nodelist else [f"--nodes={slurm.nodes or 1}"]
    given = (slurm.partition, slurm.account, slurm.time, slurm.gpus_per_node)
    names = ("partition", "account", "time", "gpus-per-node")
    args += [f"--{name}={value}" for name, value in zip(names, given, strict=True) if value]
    return tuple(args)


def plan_job(
    project: str, slurm: SlurmSettings, settings: VerifySettings, workdir: str
) -> SlurmJob:
    """The job for these settings; refuses bad values before anything is written."""
    check_settings(slurm)
    if not FOLDER.fullmatch(workdir):
        raise EnvkitError(
            f"the run's folder {workdir!r} has characters a batch script cannot carry safely",
            "choose --workdir (or slurm.workdir) made of letters, digits and / . _ - + ~",
        )
    limit = time_limit_s(slurm.time)
    image = f"{workdir}/{Path(slurm.image).name}" if slurm.stage and slurm.image else slurm.image
    step: tuple[str, ...] = ()
    if slurm.runtime == "pyxis":
        step = (f"--container-image={image}", f"--container-mounts={workdir}:{workdir}")
    return SlurmJob(
        project=project,
        runtime=slurm.runtime,
        python=slurm.python,
        image=image,
        staged_from=slurm.image if slurm.stage else None,
        time=slurm.time,
        workdir=workdir,
        sbatch_args=_sbatch_args(project, slurm, workdir),
        step_options=step,
        gpus_per_node=slurm.gpus_per_node,
        nproc_per_node=max(slurm.gpus_per_node, 1),
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
