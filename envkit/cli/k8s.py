"""`envkit k8s render` and `envkit k8s merge`: typer wiring only."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from envkit.cli.options import ConfigOption, HtmlReport, JsonReport, JunitReport
from envkit.verify.request import K8sRequest

DEFAULTS = K8sRequest()  # the option defaults shown in --help are the request's own

k8s_app = typer.Typer(
    help="Run the suite through Kubernetes: render an indexed Job / DaemonSet, merge their logs.",
    no_args_is_help=True,
)


@k8s_app.command("render")
def render(
    config: ConfigOption = None,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Folder (default envkit-k8s/).")
    ] = None,
    namespace: Annotated[str, typer.Option(help="Kubernetes namespace.")] = DEFAULTS.namespace,
    image: Annotated[
        str | None, typer.Option(help="Image the pods run (default the built tag; push it).")
    ] = None,
    nodes: Annotated[
        int, typer.Option(help="Nodes the Job checks, one pod each.")
    ] = DEFAULTS.nodes,
    gpus_per_node: Annotated[
        int | None, typer.Option(help="nvidia.com/gpu per pod (default from runtime.gpus).")
    ] = None,
    interval: Annotated[
        int, typer.Option(help="DaemonSet: seconds between rounds.")
    ] = DEFAULTS.interval_s,
    timeout: Annotated[int, typer.Option(help="Job: activeDeadlineSeconds.")] = DEFAULTS.timeout_s,
) -> None:
    """Write configmap.yaml, job.yaml (once per node) and daemonset.yaml (continuous).

    Example: envkit k8s render --out k8s/ && kubectl apply -f k8s/job.yaml"""
    from envkit.commands.k8s import run_k8s_render

    request = K8sRequest(
        namespace=namespace,
        image=image,
        nodes=nodes,
        gpus_per_node=gpus_per_node,
        interval_s=interval,
        timeout_s=timeout,
    )
    raise typer.Exit(run_k8s_render(config, out, request))


@k8s_app.command("merge")
def merge(
    logs: Annotated[list[str], typer.Argument(help="Files of `kubectl logs` output ('-': stdin).")],
    node: Annotated[
        list[str] | None, typer.Option("--node", help="A node that must report (repeatable).")
    ] = None,
    expect: Annotated[int | None, typer.Option(help="How many nodes must report.")] = None,
    json_out: JsonReport = None,
    junit_out: JunitReport = None,
    html_out: HtmlReport = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Only the summary.")] = False,
) -> None:
    """Merge the reports in pod logs: one row per node; exit codes as `envkit verify`.

    Example: envkit k8s merge pods.log (pods.log: kubectl logs -l app=envkit-verify)"""
    from envkit.commands.k8s import run_k8s_merge
    from envkit.verify.request import ReportsRequest

    outputs = ReportsRequest(json=json_out, junit=junit_out, html=html_out, quiet=quiet)
    raise typer.Exit(run_k8s_merge(logs, tuple(node or ()), expect, outputs))
