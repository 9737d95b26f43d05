"""`envkit verify` (on targets, or on a Slurm cluster's nodes with --slurm) and `envkit health`:
typer wiring only. The flags fill the typed requests of envkit/verify/request.py; what they leave
unset comes from envkit.yaml or the model's defaults (verify/resolve.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from envkit.checks.programs.health import DEFAULT_TIMEOUT_S as DEFAULT_HEALTH_TIMEOUT_S
from envkit.cli import complete
from envkit.cli.options import (
    ConfigOption,
    HistoryFile,
    HtmlReport,
    JsonReport,
    JunitReport,
    QuietFlag,
)
from envkit.targets import usage as target_usage
from envkit.verify.request import DEFAULT_PARALLEL, SUITE_TIMEOUT_S_INT, SlurmRequest

# verify's options, named here so the command reads as a list of them.
Local = Annotated[bool, typer.Option("--local", help="Verify this machine.")]
Targets = Annotated[
    list[str] | None,
    typer.Option(
        "--target", "-t", help=f"{target_usage()} (repeatable).", autocompletion=complete.targets
    ),
]
Image = Annotated[str | None, typer.Option(help="Verify IMAGE in a throwaway container.")]
Python = Annotated[
    str | None,
    typer.Option(help="Interpreter with torch (--local, ssh:// targets, the nodes of --slurm)."),
]
Only = Annotated[list[str] | None, typer.Option(help="Only these check ids or groups.")]
Skip = Annotated[list[str] | None, typer.Option(help="Skip these check ids or groups.")]
Bench = Annotated[bool, typer.Option("--bench/--no-bench", help="Run the GPU benchmarks.")]
RequireGpu = Annotated[
    bool | None,
    typer.Option("--require-gpu/--no-require-gpu", help="Override verify.require_gpu."),
]
ExpectedGpus = Annotated[int | None, typer.Option(help="Override verify.expected_gpus.")]
TargetsFile = Annotated[
    Path | None,
    typer.Option("--targets", help="File with one target URL per line ('#' comments)."),
]
Parallel = Annotated[int, typer.Option(help="How many targets to verify at once.")]
TargetTimeout = Annotated[
    float | None,
    typer.Option(help=f"Seconds one target's suite may take (default {SUITE_TIMEOUT_S_INT})."),
]
Stress = Annotated[
    str | None,
    typer.Option(
        "--stress",
        metavar="DURATION",
        help="Burn-in: every GPU at full load this long (e.g. 60s, 10m, 2h), each result "
        "checked; clocks, temperatures and throttling judged after.",
    ),
]
NoHistory = Annotated[bool, typer.Option("--no-history", help="Do not record this run.")]
Baseline = Annotated[
    str | None,
    typer.Option(
        help="Flag figures worse than their baseline: auto (the median of the target's last "
        "passing runs on the same image and GPU), a run id from `envkit history`, or a "
        "`verify --json` report file."
    ),
]
# verify --slurm's own options.
SlurmFlag = Annotated[
    bool, typer.Option("--slurm", help="Run the suite on a Slurm cluster's nodes: one batch job.")
]
SlurmNodes = Annotated[int | None, typer.Option("--nodes", help="--slurm: how many nodes.")]
SlurmNodelist = Annotated[
    str | None, typer.Option("--nodelist", help="--slurm: these nodes (n1,n2 or n[1-4]).")
]
SlurmPartition = Annotated[
    str | None, typer.Option("--partition", help="--slurm: partition (default slurm.partition).")
]
SlurmGpus = Annotated[
    int | None,
    typer.Option("--gpus-per-node", help="--slurm: GPUs per node (default from runtime.gpus)."),
]
SlurmTime = Annotated[
    str | None, typer.Option("--time", help="--slurm: the job's limit (default slurm.time).")
]
SlurmRuntimeOption = Annotated[
    str | None,
    typer.Option("--slurm-runtime", help="--slurm: python | pyxis | apptainer (slurm.runtime)."),
]
SlurmWait = Annotated[
    float | None,
    typer.Option("--wait", help="--slurm: seconds to wait for the job, queueing included."),
]
SlurmWorkdir = Annotated[
    Path | None,
    typer.Option("--workdir", help="--slurm: a shared folder for the run (slurm.workdir)."),
]


def verify(
    config: ConfigOption = None,
    local: Local = False,
    target: Targets = None,
    image: Image = None,
    python: Python = None,
    only: Only = None,
    skip: Skip = None,
    bench: Bench = True,
    require_gpu: RequireGpu = None,
    expected_gpus: ExpectedGpus = None,
    stress: Stress = None,
    json_out: JsonReport = None,
    junit_out: JunitReport = None,
    quiet: QuietFlag = False,
    targets_file: TargetsFile = None,
    parallel: Parallel = DEFAULT_PARALLEL,
    target_timeout: TargetTimeout = None,
    html_out: HtmlReport = None,
    no_history: NoHistory = False,
    history_file: HistoryFile = None,
    baseline: Baseline = None,
    slurm: SlurmFlag = False,
    slurm_nodes: SlurmNodes = None,
    slurm_nodelist: SlurmNodelist = None,
    slurm_partition: SlurmPartition = None,
    slurm_gpus_per_node: SlurmGpus = None,
    slurm_time: SlurmTime = None,
    slurm_runtime: SlurmRuntimeOption = None,
    slurm_wait_s: SlurmWait = None,
    slurm_workdir: SlurmWorkdir = None,
) -> None:
    """Run the verification suite inside containers, over SSH, or on this machine; many targets
    at once with --targets or several --target; on a Slurm cluster's nodes with --slurm.
    Example: envkit verify --target ssh://dev@gpu2:8822 --junit report.xml"""
    from envkit.commands.verify import run_verify
    from envkit.verify import request as r

    asked = _slurm_request(
        slurm_nodes,
        slurm_nodelist,
        slurm_partition,
        slurm_gpus_per_node,
        slurm_time,
        slurm_runtime,
        slurm_wait_s,
        slurm_workdir,
    )
    if not slurm:
        _refuse_slurm_options(asked)
    request = r.VerifyRequest(
        config,
        targets=r.TargetsRequest(
            urls=tuple(target or ()),
            file=targets_file,
            local=local,
            image=image,
            python=python,
            parallel=parallel,
            timeout_s=target_timeout,
        ),
        checks=r.ChecksRequest(
            only=tuple(only or ()),
            skip=tuple(skip or ()),
            bench=bench,
            require_gpu=require_gpu,
            expected_gpus=expected_gpus,
            stress_s=_stress_seconds(stress),
        ),
        reports=r.ReportsRequest(json=json_out, junit=junit_out, html=html_out, quiet=quiet),
        history=r.HistoryRequest(record=not no_history, file=history_file, baseline=baseline),
        slurm=asked if slurm else None,
    )
    raise typer.Exit(run_verify(request))


def _slurm_request(
    nodes: int | None,
    nodelist: str | None,
    partition: str | None,
    gpus_per_node: int | None,
    time: str | None,
    runtime: str | None,
    wait_s: float | None,
    workdir: Path | None,
) -> SlurmRequest:
    return SlurmRequest(
        nodes=nodes,
        nodelist=nodelist,
        partition=partition,
        gpus_per_node=gpus_per_node,
        time=time,
        runtime=runtime,
        wait_s=wait_s,
        workdir=workdir,
    )


def _stress_seconds(given: str | None) -> float | None:
    if given is None:
        return None
    from envkit.durations import parse_duration
    from envkit.errors import EnvkitError, FieldError

    try:
        return parse_duration(given, low_s=5, high_s=7 * 86400)
    except FieldError as exc:
        raise EnvkitError(f"--stress {exc.problem}", exc.fix) from None


def _refuse_slurm_options(given: SlurmRequest) -> None:
    """A --slurm option without --slurm is a mistake worth naming, not something to ignore."""
    from dataclasses import fields

    from envkit.errors import EnvkitError

    flags = {"wait_s": "wait", "gpus_per_node": "gpus-per-node", "runtime": "slurm-runtime"}
    for item in fields(given):
        if getattr(given, item.name) is not None:
            flag = flags.get(item.name, item.name)
            raise EnvkitError(f"--{flag} is an option of --slurm", "add --slurm, or drop it")


def health(
    config: ConfigOption = None,
    python: Annotated[
        str | None, typer.Option(help="Interpreter with torch (default: python3 on PATH).")
    ] = None,
    drain: Annotated[
        bool, typer.Option("--drain", help="Drain this Slurm node when it is unhealthy.")
    ] = False,
    node: Annotated[
        str | None, typer.Option(help="This node's Slurm name (default $SLURMD_NODENAME).")
    ] = None,
    timeout: Annotated[
        float, typer.Option(help="Watchdog, seconds (Slurm allows 60).")
    ] = DEFAULT_HEALTH_TIMEOUT_S,
    write: Annotated[
        Path | None,
        typer.Option(help="Write a HealthCheckProgram here (and its bundle beside it) instead."),
    ] = None,
) -> None:
    """Fast node health checks for Slurm's HealthCheckProgram or a prolog: exit 0 healthy, else
    exit 1 with a one-line reason (and the node drained with --drain).

    Example: envkit health --quiet"""
    from envkit.commands.health import HealthRequest, run_health

    raise typer.Exit(run_health(HealthRequest(config, python, drain, node, timeout, write)))
