"""One reading of each source `envkit metrics` exports: the history store and, where a project's
envkit.yaml is found, its containers through the engine. A source that cannot be read gives no
series of its own and says so (`envkit_metrics_source_up` 0, and why on stderr): a stale or
invented value is never presented as fresh."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from envkit.errors import EnvkitError
from envkit.history.store import HistoryError, default_path, open_history
from envkit.metrics import catalogue as c
from envkit.metrics.exposition import Sample, sample
from envkit.metrics.from_history import history_samples
from envkit.metrics.from_members import member_samples

HISTORY, MEMBERS = "history", "members"


@dataclass(frozen=True)
class Reading:
    source: str
    samples: list[Sample] = field(default_factory=list)
    problem: str | None = None  # why the source could not be read
    at: float = field(default_factory=time.time)


def read_history(path: Path | None) -> Reading:
    path = path or default_path()
    if not path.exists():  # nothing recorded yet: no runs, and nothing wrong
        return Reading(HISTORY)
    try:
        history = open_history(path, read_only=True)
        try:
            return Reading(HISTORY, history_samples(history))
        finally:
            history.close()
    except HistoryError as exc:  # the file cannot be opened, or a query of it failed
        return Reading(HISTORY, problem=exc.message)


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
        out.append(sample(c.SOURCE_UP, reading.problem is None, source=reading.source))
        out.append(
            sample(c.SOURCE_AGE, round(max(0.0, now - reading.at), 3), source=reading.source)
        )
        if reading.problem is None:
            out += reading.samples
    return out
