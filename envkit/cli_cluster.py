"""`envkit k8s`: the typer wiring only (cli.py registers it)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

k8s_app = typer.Typer(
    help="Run the suite through Kubernetes: render an indexed Job / DaemonSet, merge their logs.",
    no_args_is_help=True,
)


@k8s_app.command("render")
def render(
    config: Annotated[
        str | None, typer.Option("--config", "-c", help="envkit.yaml to use.")
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Folder (default envkit-k8s/).")
    ] = None,
    namespace: Annotated[str, typer.Option(help="Kubernetes namespace.")] = "default",
    image: Annotated[
        str | None, typer.Option(help="Image the pods run (default the built tag; push it).")
    ] = None,
    nodes: Annotated[int, typer.Option(help="Nodes the Job checks, one pod each.")] = 1,
    gpus_per_node: Annotated[
        int | None, typer.Option(help="nvidia.com/gpu per pod (default from runtime.gpus).")
    ] = None,
    interval: Annotated[int, typer.Option(help="DaemonSet: seconds between rounds.")] = 3600,
    timeout: Annotated[int, typer.Option(help="Job: activeDeadlineSeconds.")] = 1800,
) -> None:
    """Write configmap.yaml, job.yaml (once per node) and daemonset.yaml (continuous)."""
    from envkit.cluster.k8s import K8sRequest
    from envkit.commands.k8s import run_k8s_render

    request = K8sRequest(namespace, image, nodes, gpus_per_node, interval, timeout)
    raise typer.Exit(run_k8s_render(config, out, request))


@k8s_app.command("merge")
def merge(
    logs: Annotated[list[str], typer.Argument(help="Files of `kubectl logs` output ('-': stdin).")],
    node: Annotated[
        list[str] | None, typer.Option("--node", help="A node that must report (repeatable).")
    ] = None,
    expect: Annotated[int | None, typer.Option(help="How many nodes must report.")] = None,
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the JSON report.")] = None,
    junit_out: Annotated[Path | None, typer.Option("--junit", help="Write JUnit XML.")] = None,
    html_out: Annotated[Path | None, typer.Option("--html", help="Write the HTML page.")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Only the summary.")] = False,
) -> None:
    """Merge the reports in pod logs: one row per node; exit codes as `envkit verify`."""
    from envkit.commands.k8s import run_k8s_merge

    outputs = {"json": json_out, "junit": junit_out, "html": html_out}
    raise typer.Exit(run_k8s_merge(logs, tuple(node or ()), expect, outputs, quiet))


# verify --slurm's options (cli.py's verify takes them; the request is made here).
SlurmFlag = Annotated[
    bool, typer.Option("--slurm", help="Run the suite on a Slurm cluster's nodes: one batch job.")
]
SlurmNodes = Annotated[int | None, typer.Option("--nodes", help="--slurm: how many nodes.")]
SlurmNodelist = Annotated[
    str | None, typer.Option("--nodelist", help="--slurm: these nodes (n1,n2 or n[1-4]).")
]
SlurmPartition = Annotated[str | None, typer.Option("--partition", help="--slurm: partition.")]
SlurmGpus = Annotated[
    int | None,
    typer.Option("--gpus-per-node", help="--slurm: GPUs per node (default from runtime.gpus)."),
]
SlurmTime = Annotated[
    str | None, typer.Option("--time", help="--slurm: the job's limit (default slurm.time).")
]
SlurmRuntime = Annotated[
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


def slurm_request(given: dict[str, object]) -> object | None:
    """Takes verify's Slurm options out of `given`; the SlurmRequest when --slurm was asked."""
    names = ("nodes", "nodelist", "partition", "gpus_per_node", "time", "runtime", "wait_s")
    values = {name: given.pop(f"slurm_{name}") for name in (*names, "workdir")}
    wanted = given.pop("slurm")
    if not wanted:
        extra = [n.replace("_", "-") for n, v in values.items() if v is not None]
        if extra:
            from envkit.errors import EnvkitError

            raise EnvkitError(f"--{extra[0]} is an option of --slurm", "add --slurm, or drop it")
        return None
    from envkit.cluster.slurm_job import SlurmRequest  # only when asked: it imports jinja2

    return SlurmRequest(**values)  # type: ignore[arg-type]


def health(
    config: Annotated[
        str | None, typer.Option("--config", "-c", help="envkit.yaml (settings).")
    ] = None,
    python: Annotated[
        str | None, typer.Option(help="Interpreter with torch (default: python3 on PATH).")
    ] = None,
    drain: Annotated[
        bool, typer.Option("--drain", help="Drain this Slurm node when it is unhealthy.")
    ] = False,
    node: Annotated[
        str | None, typer.Option(help="This node's Slurm name (default $SLURMD_NODENAME).")
    ] = None,
    timeout: Annotated[float, typer.Option(help="Watchdog, seconds (Slurm allows 60).")] = 50,
    write: Annotated[
        Path | None,
        typer.Option(help="Write a HealthCheckProgram here (and its bundle beside it) instead."),
    ] = None,
) -> None:
    """Fast node health checks for Slurm's HealthCheckProgram or a prolog: exit 0 healthy, else
    exit 1 with a one-line reason (and the node drained with --drain)."""
    from envkit.commands.health import HealthRequest, run_health

    raise typer.Exit(run_health(HealthRequest(config, python, drain, node, timeout, write)))
