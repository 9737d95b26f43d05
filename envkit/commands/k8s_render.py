"""`envkit k8s render`: manifests that run the suite through Kubernetes (an indexed Job, a
DaemonSet and the bundle's ConfigMap); `envkit k8s merge` reads their pods' logs back."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field, replace
from pathlib import Path

from envkit.cluster.k8s import plan_k8s, render_k8s
from envkit.commands import OURS
from envkit.engine.client import docker_client
from envkit.errors import EnvkitError
from envkit.files import write_atomically
from envkit.services.project import load_project
from envkit.services.sharing import build_platforms, pushed_reference
from envkit.verify.request import K8sRequest

OUT_DIR = "envkit-k8s"


@dataclass(frozen=True, kw_only=True)
class K8sRenderRequest:
    config: str | None = None
    out: Path | None = None  # the manifests' folder (default envkit-k8s/ beside the config)
    manifests: K8sRequest = field(default_factory=K8sRequest)


def run(request: K8sRenderRequest) -> int:
    project = load_project(request.config)
    manifests, out = request.manifests, request.out
    platforms = None
    if manifests.image is None and project.plan.registry is not None:
        # The pods pull the team's image by digest: exactly what was pushed, on every node.
        client = docker_client()
        manifests = replace(
            manifests, image=pushed_reference(client, project, project.plan.registry)
        )
        platforms = build_platforms(project, client)  # the pushed image's architectures
    files = render_k8s(plan_k8s(project.plan, manifests, platforms))
    folder = out or project.project_dir / OUT_DIR
    for name in files:  # refuse before writing anything
        path = folder / name
        if path.exists() and not path.read_text(errors="replace").startswith(OURS):
            raise EnvkitError(
                f"{path} exists and was not written by envkit",
                "move it away, or pass --out to write the manifests elsewhere",
            )
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        write_atomically(folder / name, text)
    sys.stdout.write(
        f"wrote {', '.join(sorted(files))} to {folder}\n"
        f"next: kubectl apply -f {folder}/configmap.yaml -f {folder}/job.yaml "
        "(the commands are at the top of job.yaml); the GPU node condition and the training "
        "pods' preflight: the tops of npd-daemonset.yaml and preflight-pod.yaml\n"
    )
    return 0
