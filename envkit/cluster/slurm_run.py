"""`envkit verify --slurm`'s conversation with Slurm: which requested nodes can take work (sinfo),
one sbatch, a bounded wait with a progress line (squeue), scancel on Ctrl-C or when the wait
runs out, and the per-node reports read back from the run's shared folder and merged."""

from __future__ import annotations

import json
import shutil
import signal
import sys
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from envkit.checks.core.contract import CheckResult, TargetReport, check_result
from envkit.checks.core.text import for_terminal
from envkit.checks.programs.crossnode import CHECK_ID as CROSS_NODE
from envkit.cluster.slurm_client import (
    cancel,
    check_runtime,
    final_state,
    hostnames,
    require_client,
    slurm,
    split_usable,
    squeue_state,
)
from envkit.cluster.slurm_job import SlurmJob, check_settings, plan_job, render_job, time_limit_s
from envkit.errors import EnvkitError, FieldError
from envkit.files import link_or_copy, read_regular
from envkit.verify.agreement import judge_nodes, with_check
from envkit.verify.bundle import build_bundle
from envkit.verify.reports import checked_report

if TYPE_CHECKING:
    from envkit.verify.resolve import SlurmSettings, VerifySettings

SQUEUE_EVERY_S = 1.0
POLL_S = 0.1  # the run's `done` file: a cheap local look, so a finished job is seen at once
REPORT_LIMIT = 64 * 1024 * 1024
MISSING_RUNTIME = "envkit-missing-runtime: "


def target_name(node: str) -> str:
    return f"slurm://node/{node}"


def _down_rows(down: dict[str, str]) -> dict[str, str]:
    return {target_name(n): f"Slurm reports it {s}; no work was sent" for n, s in down.items()}


def stage(source: Path, dest: Path, quiet: bool) -> None:
    """A bundle's SquashFS into the run's shared folder, where every node reads it: a hard link
    when both are on one filesystem, else a copy (said, with its size: it can take a while)."""

    def copying() -> None:
        size = source.stat().st_size / 2**30
        sys.stderr.write(for_terminal(f"staging {source} ({size:.1f} GiB) in {dest.parent}") + "\n")

    try:
        link_or_copy(source, dest, None if quiet else copying)
    except OSError as exc:
        raise EnvkitError(
            f"could not copy {source.name} into {dest.parent}: {exc.strerror}",
            "choose another shared folder with --workdir (one with room, writable here)",
        ) from exc


def submit(job: SlurmJob, quiet: bool = True) -> str:
    folder = Path(job.workdir)
    for sub in ("reports", "logs"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    if job.staged_from is not None and job.image is not None:
        stage(Path(job.staged_from), Path(job.image), quiet)
    for name, text in render_job(job).items():
        (folder / name).write_text(text, encoding="utf-8")
    (folder / "checks.zip").write_bytes(build_bundle())
    out = slurm(["sbatch", *job.sbatch_args, str(folder / "job.sh")], timeout=60)
    return out.strip().split(";")[0]  # --parsable: ID[;CLUSTER]


@dataclass
class Waited:
    job_id: str
    state: str  # the job's last state seen
    reason: str = ""
    timed_out: bool = False
    nodes: list[str] = field(default_factory=list)


class Progress:
    """One line per change: the job's state and, while it runs, each node's."""

    def __init__(self, job_id: str, folder: Path, quiet: bool) -> None:
        self.job_id, self.folder, self.quiet = job_id, folder, quiet
        self.last = ""

    def node_states(self, nodes: list[str]) -> str:
        def one(node: str) -> str:
            if (self.folder / "reports" / f"{node}.json").exists():
                return f"{node} done"
            if (self.folder / "logs" / f"{node}.suite.log").exists():
                return f"{node} running"
            return f"{node} starting"

        return ", ".join(one(n) for n in nodes)

    def show(self, state: str, reason: str, nodes: list[str]) -> None:
        line = f"slurm job {self.job_id}: {state}"
        if state == "PENDING" and reason and reason != "None":
            line += f" ({reason})"
        if nodes:
            line += ": " + self.node_states(nodes)
        if line != self.last and not self.quiet:
            sys.stderr.write(for_terminal(line) + "\n")
        self.last = line


def allocated(folder: Path) -> list[str]:
    """The job's nodes, as job.sh wrote them at its start."""
    path = folder / "nodelist"
    text = path.read_text().strip() if path.exists() else ""
    return hostnames(text) if text else []


def wait(job_id: str, name: str, folder: Path, wait_s: float, quiet: bool) -> Waited:
    """Until the job is done or left the queue, or wait_s passed (then it is cancelled)."""
    progress = Progress(job_id, folder, quiet)
    waited = Waited(job_id, "PENDING")
    deadline = time.monotonic() + wait_s
    next_look = 0.0
    while not (folder / "done").exists():
        now = time.monotonic()
        if now >= deadline:
            waited.timed_out = True
            cancel(name)
            break
        if now >= next_look:
            next_look = now + SQUEUE_EVERY_S
            seen = squeue_state(job_id)
            if seen is None:
                waited.state = final_state(job_id)
                break
            waited.state, waited.reason = seen
            if not waited.nodes and waited.state == "RUNNING":
                waited.nodes = allocated(folder)
            progress.show(waited.state, waited.reason, waited.nodes)
        time.sleep(POLL_S)
    else:
        waited.state = "COMPLETED"
    waited.nodes = waited.nodes or allocated(folder)
    progress.show(waited.state, waited.reason, waited.nodes)
    return waited


def _log_tail(folder: Path, node: str, step: str, lines: int = 3) -> str:
    path = folder / "logs" / f"{node}.{step}.log"
    if not path.exists():
        return ""
    return " | ".join(path.read_text(errors="replace").strip().splitlines()[-lines:])


def missing_runtime(folder: Path, node: str) -> str | None:
    for line in _log_tail(folder, node, "suite", 5).split(" | "):
        if line.startswith(MISSING_RUNTIME):
            return line[len(MISSING_RUNTIME) :]
    return None


def _read_report(path: Path, wrap: bool = False) -> TargetReport:
    """A node's report (or, with `wrap`, one check's result) from the shared folder, where any
    job of the cluster's users could have written: bounded, and checked against its shape."""
    data = json.loads(read_regular(path, REPORT_LIMIT, "node report").decode("utf-8", "replace"))
    return checked_report({"target": path.stem, "checks": [data]} if wrap else data)


def _collective(folder: Path, node: str) -> CheckResult:
    path = folder / "reports" / f"{node}.collective.json"
    if path.exists():
        try:
            return _read_report(path, wrap=True)["checks"][0]
        except (FieldError, ValueError) as exc:
            return check_result(
                CROSS_NODE, "error", 0.0, f"its result could not be read: {exc}", []
            )
    if (folder / "collective-skipped").exists():
        why = "not run: the suite failed on a node, so its ranks could not all join"
        return check_result(CROSS_NODE, "skip", 0.0, why, [])
    tail = _log_tail(folder, node, "collective") or "its torchrun step left no log"
    return check_result(CROSS_NODE, "error", 0.0, f"no result from {node}: {tail}", [])


def collect(
    folder: Path, waited: Waited, down: dict[str, str], job: SlurmJob
) -> tuple[list[TargetReport], dict[str, str]]:
    """Each allocated node's report (with the cross-node result on two nodes or more, and the
    runtime it ran through), and why every other node has none."""
    reports: list[TargetReport] = []
    unreachable = _down_rows(down)
    for node in waited.nodes:
        path = folder / "reports" / f"{node}.json"
        if not path.exists():
            why = missing_runtime(folder, node) or _log_tail(folder, node, "suite")
            unreachable[target_name(node)] = f"no report (job {waited.job_id} {waited.state}): " + (
                why or "its task never started"
            )
            continue
        try:
            report = _read_report(path)
        except (FieldError, ValueError) as exc:
            unreachable[target_name(node)] = f"its report could not be read: {exc}"
            continue
        report["target"] = target_name(node)
        report["environment"]["slurm_job"] = waited.job_id
        if job.image is not None:
            where = job.staged_from or job.image
            report["environment"]["target_notes"] = [f"run through {job.runtime} from {where}"]
        if len(waited.nodes) > 1 and job.cross_node:
            report = with_check(report, _collective(folder, node))
        reports.append(report)
    return judge_nodes(reports), unreachable


def refuse_missing_runtime(folder: Path, waited: Waited, reports: list[TargetReport]) -> None:
    """Every node lacking the chosen runtime is a configuration mistake, not a node fault."""
    missing = {n: missing_runtime(folder, n) for n in waited.nodes}
    if waited.nodes and not reports and all(missing.values()):
        first = next(iter(missing.values()))
        raise EnvkitError(
            f"the chosen Slurm runtime is missing on every node: {first}",
            "install it on the nodes, or choose another with slurm.runtime "
            "(python, pyxis, apptainer, charliecloud) or --slurm-runtime",
        )


def _never_started(slurm: SlurmSettings, names: list[str], why: str) -> dict[str, str]:
    if names:
        return {target_name(n): why for n in names}
    return {target_name(f"unallocated-{i + 1}"): why for i in range(slurm.nodes or 1)}


def _submit_and_wait(job: SlurmJob, folder: Path, limit: float, quiet: bool) -> Waited:
    """Ctrl-C at any point from here on cancels the job, by its unique name: also in the moment
    between sbatch queueing it and its id reaching envkit. SIGTERM (a CI system cancelling its
    own job, `kill`) does the same."""
    job_id = None
    main = threading.current_thread() is threading.main_thread()  # only it may set handlers
    previous = signal.signal(signal.SIGTERM, _interrupt) if main else None
    try:
        try:
            job_id = submit(job, quiet)
        except EnvkitError:
            shutil.rmtree(folder, ignore_errors=True)  # nothing was queued: leave nothing
            raise
        return wait(job_id, job.name, folder, limit, quiet)
    except KeyboardInterrupt:
        gone = cancel(job.name)
        what = f"slurm job {job_id or job.name}"
        sys.stderr.write(f"{what} cancelled" + ("" if gone else " (squeue still lists it)") + "\n")
        raise
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def verify_on_slurm(
    project: str, slurm: SlurmSettings, settings: VerifySettings, run_id: str, quiet: bool
) -> tuple[list[TargetReport], dict[str, str]]:
    """One batch job over the requested nodes; each node's report, and why others have none."""
    check_settings(slurm)  # before any Slurm command sees the values
    require_client()
    names = hostnames(slurm.nodelist) if slurm.nodelist else []
    down = split_usable(names) if names else {}
    usable = [n for n in names if n not in down]
    if names and not usable:
        return [], _down_rows(down)
    if usable:
        slurm = replace(slurm, nodelist=",".join(usable))
    folder = slurm.workdir / f"run-{run_id}"
    job = plan_job(project, slurm, settings, str(folder))
    check_runtime(job)
    limit = slurm.wait_s or time_limit_s(job.time) + 600  # the job's own limit + queueing
    try:
        waited = _submit_and_wait(job, folder, limit, quiet)
    finally:  # a staged SquashFS is the bundle's again at will: never kept on the shared disk
        if job.staged_from is not None and job.image is not None:
            Path(job.image).unlink(missing_ok=True)
    reports, unreachable = collect(folder, waited, down, job)
    if waited.timed_out:
        why = (
            f"envkit stopped waiting after {limit:.0f} s and cancelled job {waited.job_id} "
            f"({waited.state}{': ' + waited.reason if waited.reason else ''}); "
            "raise --wait, or ask for nodes that are free (sinfo)"
        )
        sys.stderr.write(for_terminal(why) + "\n")
        if not waited.nodes:
            unreachable.update(_never_started(slurm, usable, why))
    refuse_missing_runtime(folder, waited, reports)
    passed = all(not r["summary"]["fail"] and not r["summary"]["error"] for r in reports)
    if passed and not unreachable:  # a run that passed leaves nothing behind
        shutil.rmtree(folder, ignore_errors=True)
    else:
        sys.stderr.write(f"the job's scripts, logs and reports are kept in {folder}\n")
    return reports, unreachable
