"""One reading of each source `envkit metrics` exports: the history store and, where a project's
envkit.yaml is found, its containers through the engine. A source that cannot be read gives no
series of its own and says so (`envkit_metrics_source_up` 0, and why on stderr): a stale or
invented value is never presented as fresh."""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field
from pathlib import Path

from envkit.errors import EnvkitError
from envkit.history.store import HistoryError, default_path, open_history
from envkit.metrics import catalogue as c
from envkit.metrics.exposition import Sample, sample
from envkit.metrics.from_history import Jobs, history_samples
from envkit.metrics.from_members import member_samples
from envkit.processes import quiet_output

HISTORY, MEMBERS = "history", "members"


@dataclass(frozen=True)
class Reading:
    source: str
    samples: list[Sample] = field(default_factory=list)
    problem: str | None = None  # why the source could not be read
    at: float = field(default_factory=time.time)


def read_history(path: Path | None, job_mapping: Path | None = None) -> Reading:
    path = path or default_path()
    if not path.exists():  # nothing recorded yet: no runs, and nothing wrong
        return Reading(HISTORY)
    try:
        history = open_history(path, read_only=True)
        try:
            return Reading(HISTORY, history_samples(history, gpu_jobs(job_mapping)))
        finally:
            history.close()
    except HistoryError as exc:  # the file cannot be opened, or a query of it failed
        return Reading(HISTORY, problem=exc.message)
    except OSError as exc:
        return Reading(HISTORY, problem=f"job mapping {job_mapping}: {exc.strerror or exc}")


def gpu_jobs(folder: Path | None) -> Jobs:
    """The Slurm jobs on this machine's GPUs, read as dcgm-exporter reads its
    --hpc-job-mapping-dir: a file per GPU named by its index ("2.0": MIG instance 0 of GPU 2)
    holding the ids of the jobs on it, one a line, which a Slurm prolog writes and its epilog
    removes; no folder is no job yet. Each job's user is squeue's."""
    if folder is None or not folder.is_dir():
        return {}
    found: dict[str, list[str]] = {}
    for entry in sorted(folder.iterdir()):
        gpu = entry.name.split(".")[0]
        with contextlib.suppress(FileNotFoundError, IsADirectoryError):  # a job just ended
            if gpu.isdigit():
                found.setdefault(gpu, []).extend(entry.read_text().split())
    users = _users(sorted({job for jobs in found.values() for job in jobs}))
    return {gpu: [(job, users.get(job)) for job in jobs] for gpu, jobs in found.items()}


def _users(jobs: list[str]) -> dict[str, str]:
    """Each job's user (`%A` is a job's own id, an array element's too); none where squeue
    cannot answer (one call per reading, and only while jobs run)."""
    if not jobs:
        return {}
    out = quiet_output(["squeue", "-h", "-j", ",".join(jobs), "-o", "%A %u"], timeout=10)
    pairs = [line.split() for line in (out or "").splitlines()]
    return {pair[0]: pair[1] for pair in pairs if len(pair) == 2}


def read_members(config: str | None) -> Reading:
    from envkit.services.status import collect

    try:
        report = collect(config, volumes=False)
    except EnvkitError as exc:
        return Reading(MEMBERS, problem=exc.message)
    except Exception as exc:  # an engine that broke mid-answer: an exporter says so, and lives
        return Reading(MEMBERS, problem=f"the engine's answer could not be read: {exc}")
    return Reading(MEMBERS, member_samples(report, report.get("host_gpus")))


def exported(readings: list[Reading], now: float | None = None) -> list[Sample]:
    """Each reading's samples, and each source's up and age."""
    now = time.time() if now is None else now
    out: list[Sample] = []
    for reading in readings:
        age = round(max(0.0, now - reading.at), 3)
        out.append(sample(c.SOURCE_UP, reading.problem is None, source=reading.source))
        out.append(sample(c.SOURCE_AGE, age, source=reading.source))
        if reading.problem is None:
            out += reading.samples
    return out
