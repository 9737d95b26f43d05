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
