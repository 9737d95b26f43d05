"""`envkit metrics`: the latest run of every target, the GPU hardware counters it read and the
team's containers, as Prometheus reads them: printed once, written for node_exporter's textfile
collector (--textfile DIR), or served over HTTP (--serve ADDR); or the alert rules (--rules) and
the Grafana dashboard (--dashboard) made from the same catalogue."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from envkit.config.load import config_given
from envkit.errors import EnvkitError
from envkit.metrics.collect import HISTORY, MEMBERS, Reading, exported, read_history, read_members
from envkit.metrics.exposition import render

MIN_INTERVAL_S = 1


@dataclass(frozen=True, kw_only=True)
class MetricsRequest:
    config: str | None = None
    history_file: Path | None = None
    textfile: Path | None = None
    serve: str | None = None
    interval: int = 15
    openmetrics: bool = False
    rules: bool = False
    stale_hours: float = 24.0
    dashboard: bool = False
    job_mapping: Path | None = None  # dcgm-exporter's --hpc-job-mapping-dir


def _one_way(request: MetricsRequest) -> None:
    chosen = [
        name
        for name, given in (
            ("--textfile", request.textfile is not None),
            ("--serve", request.serve is not None),
            ("--rules", request.rules),
            ("--dashboard", request.dashboard),
        )
        if given
    ]
    if len(chosen) > 1:
        raise EnvkitError(
            f"{' and '.join(chosen)} ask for different things", "give one of them per run"
        )
    if request.textfile is not None and request.openmetrics:
        raise EnvkitError(
            "--openmetrics with --textfile: node_exporter's textfile collector reads only the "
            "text format",
            "leave out --openmetrics",
        )
    if request.interval < MIN_INTERVAL_S:
        raise EnvkitError(f"--interval {request.interval}: too short", "use 1 second or more")
    if request.stale_hours <= 0:
        raise EnvkitError(f"--stale-hours {request.stale_hours:g}", "use a positive number")


def _readers(request: MetricsRequest) -> dict[str, Callable[[], Reading]]:
    readers: dict[str, Callable[[], Reading]] = {
        HISTORY: partial(read_history, request.history_file, request.job_mapping)
    }
    if config_given(request.config):
        readers[MEMBERS] = partial(read_members, request.config)
    return readers


def run(request: MetricsRequest) -> int:
    _one_way(request)
    if request.rules:
        from envkit.metrics.rules import rules_yaml

        sys.stdout.write(rules_yaml(request.stale_hours))
        return 0
    if request.dashboard:
        from envkit.metrics.dashboard import dashboard_json

        sys.stdout.write(dashboard_json())
        return 0
    readers = _readers(request)
    if request.serve is not None:
        from envkit.metrics.serve import serve

        serve(request.serve, readers, request.interval)
        return 0
    readings = [read() for read in readers.values()]
    for reading in readings:
        if reading.problem:
            sys.stderr.write(f"envkit metrics: {reading.source}: {reading.problem}\n")
    text = render(exported(readings), request.openmetrics)
    if request.textfile is not None:
        from envkit.metrics.textfile import write_textfile

        write_textfile(request.textfile, text)
    else:
        sys.stdout.write(text)
    # Exit 1 when a source could not be read: a timer's failure shows in its unit's status.
    return 1 if any(r.problem for r in readings) else 0
