"""`envkit k8s render` and `envkit k8s merge`: typer wiring only."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from envkit.cli.options import ConfigOption, HtmlReport, JsonFile, JunitReport, QuietFlag
from envkit.verify.request import K8sRequest

DEFAULTS = K8sRequest()  # the option defaults shown in --help are the request's own

k8s_app = typer.Typer(
    help="Run the suite through Kubernetes: render an indexed Job / DaemonSet, merge their logs."
    "\n\n\b\nExample: envkit k8s render --out k8s/",
    no_args_is_help=True,
)


@k8s_app.command("render", short_help="Write the Job, DaemonSet and ConfigMap.")
def render(
    config: ConfigOption = None,
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", metavar="DIR", help="Folder (default envkit-k8s/)."),
    ] = None,
    namespace: Annotated[
        str, typer.Option(metavar="NAME", help="Kubernetes namespace.")
    ] = DEFAULTS.namespace,
    image: Annotated[
        str | None,
        typer.Option(metavar="IMAGE", help="Image the pods run (default the built tag; push it)."),
    ] = None,
    nodes: Annotated[
        int, typer.Option(metavar="N", help="Nodes the Job checks, one pod each.")
    ] = DEFAULTS.nodes,
    gpus_per_node: Annotated[
        int | None,
        typer.Option(metavar="N", help="nvidia.com/gpu per pod (default from runtime.gpus)."),
    ] = None,
    interval: Annotated[
        int, typer.Option(metavar="SECONDS", help="DaemonSet: seconds between rounds.")
    ] = DEFAULTS.interval_s,
    timeout: Annotated[
        float, typer.Option(metavar="SECONDS", help="Job: activeDeadlineSeconds.")
    ] = DEFAULTS.timeout_s,
) -> None:
    """Write configmap.yaml, job.yaml (once per node) and daemonset.yaml (continuous).

    \b
    Example: envkit k8s render --out k8s/ && kubectl apply -f k8s/job.yaml"""
    from envkit.commands import k8s_render as command

    manifests = K8sRequest(
        namespace=namespace,
        image=image,
        nodes=nodes,
        gpus_per_node=gpus_per_node,
        interval_s=interval,
        timeout_s=int(timeout),
    )
    request = command.K8sRenderRequest(config=config, out=out, manifests=manifests)
    raise typer.Exit(command.run(request))


@k8s_app.command("merge", short_help="Merge the reports in pod logs.")
def merge(
    logs: Annotated[
        list[str],
        typer.Argument(metavar="LOG...", help="Files of `kubectl logs` output ('-': stdin)."),
    ],
    node: Annotated[
        list[str] | None,
        typer.Option("--expect-node", metavar="NAME", help="A node that must report (repeatable)."),
    ] = None,
    expect: Annotated[
        int | None, typer.Option(metavar="N", help="How many nodes must report.")
    ] = None,
    json_file: JsonFile = None,
    junit_out: JunitReport = None,
    html_out: HtmlReport = None,
    quiet: QuietFlag = False,
) -> None:
    """Merge the reports in pod logs: one row per node; exit codes as `envkit verify`.

    \b
    Example: envkit k8s merge pods.log   (kubectl logs -l app=envkit-verify)"""
    from envkit.commands import k8s_merge as command
    from envkit.verify.request import ReportsRequest

    reports = ReportsRequest(json_file=json_file, junit=junit_out, html=html_out, quiet=quiet)
    request = command.K8sMergeRequest(
        logs=tuple(logs), nodes=tuple(node or ()), expect=expect, reports=reports
    )
    raise typer.Exit(command.run(request))
