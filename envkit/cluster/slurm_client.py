"""The Slurm client commands envkit runs (sinfo, sbatch's neighbours squeue, scontrol, scancel):
each bounded, each failure a user-facing error; missing tools or configuration are exit 3."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING

from envkit.errors import ClusterUnreachableError, EnvkitError
from envkit.processes import quiet_output

if TYPE_CHECKING:
    from envkit.cluster.slurm_job import SlurmJob

# Node states that take no work: sinfo marks a node that stopped answering with a trailing '*'.
NOT_USABLE = {"down", "drained", "draining", "drain", "fail", "failing", "future", "unknown"}
CLIENT_TOOLS = ("sbatch", "squeue", "scontrol", "scancel", "sinfo")


def _not_installed(tool: str) -> ClusterUnreachableError:
    return ClusterUnreachableError(
        f"{tool} is not installed here",
        "run envkit on a machine with the Slurm client tools (a login node)",
    )


def require_client() -> None:
    """The client tools and a configuration they can read, before anything is written."""
    if missing := [tool for tool in CLIENT_TOOLS if shutil.which(tool) is None]:
        raise _not_installed(missing[0])
    conf = os.environ.get("SLURM_CONF")
    if conf and not Path(conf).is_file():  # Slurm's tools would retry it for a minute
        raise ClusterUnreachableError(
            f"SLURM_CONF names {conf}, which does not exist",
            "point SLURM_CONF at the cluster's slurm.conf, or unset it",
        )


def slurm(argv: list[str], timeout: float = 30) -> str:
    """One Slurm client command; its stdout. A missing client or controller is exit 3."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except FileNotFoundError:
        raise _not_installed(argv[0]) from None
    except subprocess.TimeoutExpired:
        raise ClusterUnreachableError(
            f"{argv[0]} did not answer within {timeout:.0f} s", "is slurmctld up? (scontrol ping)"
        ) from None
    if done.returncode != 0:
        why = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        if "Unable to contact slurm controller" in why[0] or "Connection refused" in why[0]:
            raise ClusterUnreachableError(
                f"{argv[0]}: {why[0]}", "is slurmctld up? (scontrol ping)"
            )
        # No slurm.conf, no SLURM_CONF, no configless DNS record: not a cluster's machine.
        if "configuration source" in why[0] or "process configuration file" in why[0]:
            raise ClusterUnreachableError(
                f"{argv[0]} finds no Slurm configuration here",
                "run envkit on the cluster's login node, or set SLURM_CONF to its slurm.conf",
            )
        fix = "check the request against `sinfo` (partition, nodes, limits)"
        if "gres" in why[0].lower():
            fix = "the nodes have no GPUs configured (Gres=gpu:N): pass --gpus-per-node 0"
        raise EnvkitError(f"{argv[0]} refused: {why[0]}", fix)
    return done.stdout


def hostnames(nodelist: str) -> list[str]:
    return slurm(["scontrol", "show", "hostnames", nodelist]).split()


def split_usable(names: list[str]) -> dict[str, str]:
    """The requested nodes that cannot take work, with their state; unknown names refused."""
    out = slurm(["sinfo", "-h", "-N", "-o", "%N|%T", "-n", ",".join(names)])
    states: dict[str, str] = {}
    for line in out.splitlines():
        name, _, state = line.partition("|")
        states.setdefault(name.strip(), state.strip())
    if unknown := [n for n in names if n not in states]:
        raise EnvkitError(
            f"Slurm has no node {', '.join(unknown)}", "see the node names with `sinfo -N`"
        )
    return {
        n: s
        for n, s in states.items()
        if n in names and (s.endswith("*") or s.rstrip("*+~#$@").lower() in NOT_USABLE)
    }


def check_runtime(job: SlurmJob) -> None:
    """pyxis adds --container-image to srun; without it the job would fail on every node."""
    if job.runtime == "pyxis" and "--container-image" not in slurm(["srun", "--help"]):
        raise EnvkitError(
            "slurm.runtime is pyxis, but this cluster's srun has no --container-image "
            "(the pyxis plugin is not installed)",
            "ask the cluster's admins for pyxis/enroot, or set slurm.runtime: apptainer or python",
        )


def cancel(name: str, wait_s: float = 15.0) -> bool:
    """scancel by the run's unique job name, then wait until squeue no longer lists it; whether
    it is gone."""
    quiet_output(["scancel", "--name", name], timeout=30)
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        listed = quiet_output(["squeue", "-h", "--name", name, "-o", "%i"], timeout=15)
        if listed is not None and not listed.strip():
            return True
        time.sleep(0.2)
    return False


def squeue_state(job_id: str) -> tuple[str, str] | None:
    """(state, reason) while the job is queued or running; None once it left the queue."""
    try:
        out = slurm(["squeue", "-h", "-j", job_id, "-o", "%T|%r"], timeout=15)
    except EnvkitError:
        return None  # squeue refuses a job id it no longer knows
    line = out.strip().splitlines()[:1]
    if not line:
        return None
    state, _, reason = line[0].partition("|")
    return state, reason


def final_state(job_id: str) -> str:
    try:
        out = slurm(["scontrol", "show", "job", "-o", job_id], timeout=15)
    except EnvkitError:
        return "ENDED"
    found = [w for w in out.split() if w.startswith("JobState=")]
    return found[0].split("=", 1)[1] if found else "ENDED"
