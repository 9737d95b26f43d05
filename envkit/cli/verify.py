"""`envkit verify` (on targets, or on a Slurm cluster's nodes with --slurm) and `envkit health`:
typer wiring only. The flags fill the typed requests of envkit/verify/request.py; what they leave
unset comes from envkit.yaml or the model's defaults (verify/resolve.py)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from pathlib import Path
from typing import Annotated, Any

import typer

from envkit.checks.programs.health import DEFAULT_TIMEOUT_S as DEFAULT_HEALTH_TIMEOUT_S
from envkit.cli import complete
from envkit.cli.options import (
    ConfigOption,
    HistoryFile,
    HtmlReport,
    JsonFile,
    JsonFlag,
    JunitReport,
    PythonOption,
    QuietFlag,
)
from envkit.targets import usage as target_usage
from envkit.verify.request import DEFAULT_PARALLEL, SUITE_TIMEOUT_S_INT, SlurmRequest, VerifyRequest

# verify's options, named here so the command reads as a list of them.
Local = Annotated[bool, typer.Option("--local", help="Verify this machine.")]
Targets = Annotated[
    list[str] | None,
    typer.Option(
        "--target",
        "-t",
        metavar="TARGET",
        help=f"{target_usage()} (repeatable).",
        autocompletion=complete.targets,
    ),
]
Image = Annotated[
    str | None, typer.Option(metavar="IMAGE", help="Verify IMAGE in a throwaway container.")
]
BundleOption = Annotated[
    Path | None,
    typer.Option(
        "--bundle",
        metavar="DIR",
        help="Verify an `envkit bundle`'s image through ch-run, Apptainer or enroot, the first "
        "installed (no engine, no network), once the bundle matches its manifest; with "
        "--slurm, on the nodes.",
    ),
]


def _checks_option(help: str) -> Any:
    return typer.Option(metavar="CHECK", help=help, autocompletion=complete.checks)


Only = Annotated[list[str] | None, _checks_option("Only these check ids or groups (repeatable).")]
Skip = Annotated[list[str] | None, _checks_option("Skip these check ids or groups (repeatable).")]
Bench = Annotated[bool, typer.Option("--bench/--no-bench", help="Run the GPU benchmarks.")]
RequireGpu = Annotated[
    bool | None, typer.Option("--require-gpu/--no-require-gpu", help="Override verify.require_gpu.")
]
ExpectedGpus = Annotated[
    int | None, typer.Option(metavar="N", help="Override verify.expected_gpus.")
]
TargetsFile = Annotated[
    Path | None,
    typer.Option(
        "--targets", metavar="PATH", help="File with one target URL per line ('#' comments)."
    ),
]
Parallel = Annotated[int, typer.Option(metavar="N", help="How many targets to verify at once.")]
TargetTimeout = Annotated[
    float | None,
    typer.Option(
        metavar="SECONDS",
        help=f"How long one target's suite may take (default {SUITE_TIMEOUT_S_INT}).",
    ),
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
        metavar="BASELINE",
        help="Flag figures worse than their baseline: auto (the median of the target's last "
        "passing runs on the same image and GPU), a run id from `envkit history`, or a "
        "report file of `verify --json-file`.",
    ),
]
# verify --slurm's own options.
SlurmFlag = Annotated[
    bool, typer.Option("--slurm", help="Run the suite on a Slurm cluster's nodes: one batch job.")
]


def _slurm_option(flag: str, metavar: str, help: str) -> Any:
    """An option of --slurm only (_refuse_slurm_options names it when --slurm is missing)."""
    return typer.Option(flag, metavar=metavar, help=f"--slurm: {help}")


SlurmNodes = Annotated[int | None, _slurm_option("--nodes", "N", "how many nodes.")]
SlurmNodelist = Annotated[
    str | None, _slurm_option("--nodelist", "NODES", "these nodes (n1,n2 or n[1-4]).")
]
SlurmPartition = Annotated[
    str | None, _slurm_option("--partition", "NAME", "partition (default slurm.partition).")
]
SlurmGpus = Annotated[
    int | None, _slurm_option("--gpus-per-node", "N", "GPUs per node (default from runtime.gpus).")
]
SlurmTime = Annotated[
    str | None, _slurm_option("--time", "TIME", "the job's limit (default slurm.time).")
]
SlurmRuntimeOption = Annotated[
    str | None,
    _slurm_option(
        "--slurm-runtime",
        "RUNTIME",
        "python, pyxis, apptainer or charliecloud (default slurm.runtime).",
    ),
]
SlurmWait = Annotated[
    float | None,
    _slurm_option("--wait", "SECONDS", "how long to wait for the job, queue included."),
]
SlurmWorkdir = Annotated[
    Path | None, _slurm_option("--workdir", "DIR", "a shared folder for the run.")
]


def verify(
    ctx: typer.Context,
    config: ConfigOption = None,
    local: Local = False,
    target: Targets = None,
    image: Image = None,
    bundle: BundleOption = None,
    python: PythonOption = None,
    only: Only = None,
    skip: Skip = None,
    bench: Bench = True,
    require_gpu: RequireGpu = None,
    expected_gpus: ExpectedGpus = None,
    stress: Stress = None,
    as_json: JsonFlag = False,
    json_file: JsonFile = None,
    junit: JunitReport = None,
    quiet: QuietFlag = False,
    targets_file: TargetsFile = None,
    parallel: Parallel = DEFAULT_PARALLEL,
    target_timeout: TargetTimeout = None,
    html: HtmlReport = None,
    no_history: NoHistory = False,
    history_file: HistoryFile = None,
    baseline: Baseline = None,
    slurm: SlurmFlag = False,
    nodes: SlurmNodes = None,
    nodelist: SlurmNodelist = None,
    partition: SlurmPartition = None,
    gpus_per_node: SlurmGpus = None,
    time: SlurmTime = None,
    runtime: SlurmRuntimeOption = None,  # named as SlurmRequest's fields, which it fills
    wait_s: SlurmWait = None,
    workdir: SlurmWorkdir = None,
) -> None:
    """Run the verification suite inside containers, over SSH, or on this machine; many targets
    at once with --targets or several --target; on a Slurm cluster's nodes with --slurm. --json
    prints the combined report on stdout (the table goes to stderr).

    \b
    Example: envkit verify --target ssh://dev@gpu2:8822 --junit report.xml
             envkit verify --json | jq .summary"""
    from envkit.commands import verify as command

    raise typer.Exit(command.run(verify_request(ctx.params)))


def verify_request(given: Mapping[str, Any]) -> VerifyRequest:
    """verify's options, by the names typer gives them, as the typed request."""
    from envkit.verify import request as r

    # verify's --slurm options are named as the request's fields
    asked = SlurmRequest(**{item.name: given[item.name] for item in fields(SlurmRequest)})
    if not given["slurm"]:
        _refuse_slurm_options(asked)
    return r.VerifyRequest(
        config=given["config"],
        targets=r.TargetsRequest(
            urls=tuple(given["target"] or ()),
            file=given["targets_file"],
            local=given["local"],
            image=given["image"],
            bundle=given["bundle"],
            python=given["python"],
            parallel=given["parallel"],
            timeout_s=given["target_timeout"],
        ),
        checks=r.ChecksRequest(
            only=tuple(given["only"] or ()),
            skip=tuple(given["skip"] or ()),
            bench=given["bench"],
            require_gpu=given["require_gpu"],
            expected_gpus=given["expected_gpus"],
            stress_s=_stress_seconds(given["stress"]),
        ),
        reports=r.ReportsRequest(
            json_file=given["json_file"],
            junit=given["junit"],
            html=given["html"],
            quiet=given["quiet"],
            stdout_json=given["as_json"],
        ),
        history=r.HistoryRequest(
            record=not given["no_history"], file=given["history_file"], baseline=given["baseline"]
        ),
        slurm=asked if given["slurm"] else None,
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
    from envkit.errors import EnvkitError

    flags = {"wait_s": "wait", "gpus_per_node": "gpus-per-node", "runtime": "slurm-runtime"}
    for item in fields(given):
        if getattr(given, item.name) is not None:
            flag = flags.get(item.name, item.name)
            raise EnvkitError(f"--{flag} is an option of --slurm", "add --slurm, or drop it")


HealthBundle = Annotated[
    Path | None,
    typer.Option(
        "--bundle",
        metavar="DIR",
        help="With --program: run the checks in this `envkit bundle`'s image through "
        "Charliecloud's ch-run (nodes without python).",
    ),
]
NpdFlag = Annotated[
    bool,
    typer.Option(
        "--npd",
        help="node-problem-detector's custom-plugin protocol: exit 0 ok, 1 a problem, "
        "2 unknown (no GPU read, no answer in time), one line of at most 80 bytes.",
    ),
]


def health(
    config: ConfigOption = None,
    python: PythonOption = None,
    drain: Annotated[
        bool, typer.Option("--drain", help="Drain this Slurm node when it is unhealthy.")
    ] = False,
    node: Annotated[
        str | None,
        typer.Option(metavar="NAME", help="This node's Slurm name (default $SLURMD_NODENAME)."),
    ] = None,
    timeout: Annotated[
        float, typer.Option(metavar="SECONDS", help="Watchdog (Slurm allows 60).")
    ] = DEFAULT_HEALTH_TIMEOUT_S,
    program: Annotated[
        Path | None,
        typer.Option(
            "--program",
            metavar="PATH",
            help="Write a HealthCheckProgram here (and its bundle beside it) instead.",
        ),
    ] = None,
    baseline: Annotated[
        str | None,
        typer.Option(
            "--baseline",
            metavar="BASELINE",
            help="reset: forget this node's recorded GPU topology first (after intended "
            "hardware work); the next healthy run records it anew.",
        ),
    ] = None,
    bundle: HealthBundle = None,
    npd: NpdFlag = False,
) -> None:
    """Fast node health checks for Slurm's HealthCheckProgram or a prolog: exit 0 healthy, else
    exit 1 with a one-line reason (and the node drained with --drain); with --npd, as a
    Kubernetes node-problem-detector plugin (docs/cluster.md).

    \b
    Example: envkit health --program /etc/slurm/envkit-health --drain
    Example: envkit health --program /etc/slurm/health --bundle /nfs/nlp --drain
    Example: envkit health --npd"""
    from envkit.commands import health as command

    request = command.HealthRequest(
        config=config,
        python=python,
        drain=drain,
        node=node,
        timeout=timeout,
        write=program,
        baseline_reset=command.baseline_reset(baseline, program),
        npd=npd,
        bundle=bundle,
    )
    raise typer.Exit(command.run(request))
