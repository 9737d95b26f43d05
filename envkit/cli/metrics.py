"""`envkit metrics`: typer wiring only."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from envkit.cli.options import ConfigOption, HistoryFile

Textfile = Annotated[
    Path | None,
    typer.Option(
        "--textfile",
        metavar="DIR",
        help="Write envkit.prom in DIR (atomically) for node_exporter's textfile collector.",
    ),
]
Serve = Annotated[
    str | None,
    typer.Option(
        "--serve",
        metavar="ADDR",
        help="Serve /metrics on HOST:PORT (loopback unless named; :PORT is 127.0.0.1).",
    ),
]
Interval = Annotated[
    int,
    typer.Option(
        "--interval", metavar="SECONDS", help="With --serve: how often each source is read."
    ),
]
OpenMetrics = Annotated[
    bool, typer.Option("--openmetrics", help="OpenMetrics 1.0 instead of the text format.")
]
Rules = Annotated[bool, typer.Option("--rules", help="Print the Prometheus alert rules instead.")]
StaleHours = Annotated[
    float,
    typer.Option(
        "--stale-hours",
        metavar="HOURS",
        help="With --rules: alert when a target's latest run is older.",
    ),
]
JobMapping = Annotated[
    Path | None,
    typer.Option(
        "--hpc-job-mapping-dir",
        metavar="DIR",
        envvar="DCGM_HPC_JOB_MAPPING_DIR",
        help="dcgm-exporter's job mapping: a file per GPU index holding the ids of the Slurm "
        "jobs on it. Each job and its user label this machine's GPUs.",
    ),
]
Dashboard = Annotated[
    bool, typer.Option("--dashboard", help="Print the Grafana dashboard (JSON) instead.")
]


def metrics(
    config: ConfigOption = None,
    history_file: HistoryFile = None,
    textfile: Textfile = None,
    serve: Serve = None,
    interval: Interval = 15,
    openmetrics: OpenMetrics = False,
    rules: Rules = False,
    stale_hours: StaleHours = 24.0,
    dashboard: Dashboard = False,
    hpc_job_mapping_dir: JobMapping = None,
) -> None:
    """The latest run of every target (checks, figures against their peaks, the GPUs' ECC, XIDs,
    links and temperatures under dcgm-exporter's names where they mean the same) and each
    member container's state and GPU use, as Prometheus reads them. Exit 1 when a source could
    not be read (its series are left out; envkit_metrics_source_up says which).

    \b
    Example: envkit metrics --serve 127.0.0.1:9842
    Example: envkit metrics --textfile /var/lib/prometheus/node-exporter
    Example: envkit metrics --hpc-job-mapping-dir /run/dcgm-job-map --serve :9842
    Example: envkit metrics --rules > envkit-rules.yml"""
    from envkit.commands import metrics as command

    request = command.MetricsRequest(
        config=config,
        history_file=history_file,
        textfile=textfile,
        serve=serve,
        interval=interval,
        openmetrics=openmetrics,
        rules=rules,
        stale_hours=stale_hours,
        dashboard=dashboard,
        job_mapping=hpc_job_mapping_dir,
    )
    raise typer.Exit(command.run(request))
