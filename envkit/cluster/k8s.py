"""Kubernetes manifests that run the checks bundle on a cluster's nodes: an indexed Job (once per
node, GPUs requested through the device plugin) and a DaemonSet (every GPU node, again and
again, GPUs seen but not claimed), with the bundle in a ConfigMap. Each pod prints its report
on one line after a marker, so `kubectl logs` carries it back (`envkit k8s merge`).

No cluster is reachable where envkit is tested: the manifests are validated against the
Kubernetes schemas of several releases, not applied (docs/cluster.md says what was run)."""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass, replace
from pathlib import Path

from envkit.checks.core.contract import size_bytes
from envkit.errors import EnvkitError
from envkit.plan import Plan
from envkit.render.files import make_environment
from envkit.verify.bundle import build_bundle
from envkit.verify.request import ChecksRequest, K8sRequest
from envkit.verify.resolve import resolve

MARKER = "@@envkit-report@@"
BUNDLE_KEY = "envkit-checks.zip"
DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
TARGET = "k8s://node/$(NODE_NAME)"  # the kubelet expands $(NODE_NAME) in args


def _program(name: str) -> str:
    """A shell program of this folder, its %(name)s fields filled in by the plan."""
    return (Path(__file__).parent / name).read_text(encoding="utf-8")


# The pod's whole program: find the image's python, run the bundle, print the report after the
# marker on one line (JSON's own newlines are whitespace; newlines in strings are escaped).
# The kubelet expands $(NAME) only for a defined variable name, so `$(command -v ...)` is left
# to the shell; no `$$` appears (the kubelet would fold it).
RUN = _program("k8s-run.sh")


# node-problem-detector beside the team's image: the image's python runs `health --npd` every
# HEALTH_INTERVAL_S and leaves its verdict in a shared folder; NPD's custom plugin (a shell
# script, NPD's image has no python) reports that verdict as the node condition, and Unknown
# when it is missing or older than three intervals (a stuck health run is not a healthy node).
NPD_IMAGE = "registry.k8s.io/node-problem-detector/node-problem-detector:v0.8.20"
NPD_CONDITION = "EnvkitGpuProblem"
HEALTH_INTERVAL_S = 300
VERDICT = "/status/envkit-health"
HEALTH_LOOP = _program("k8s-health-loop.sh")
NPD_PLUGIN = _program("npd-plugin.sh")
NPD_MONITOR = _program("npd-monitor.json")  # the plugin's monitor config, as NPD reads it


@dataclass(frozen=True)
class K8sPlan:
    project: str
    name: str  # the Job's name; the DaemonSet adds -monitor
    namespace: str
    image: str
    nodes: int
    gpus_per_node: int
    interval_s: int
    timeout_s: int
    shm_limit: str
    node_selector: tuple[tuple[str, str], ...]
    architectures: tuple[str, ...]  # kubernetes.io/arch values the image has: amd64, arm64
    config_json: str  # the runner's settings, target k8s://node/$(NODE_NAME)
    monitor_config_json: str
    health_config_json: str  # `health --npd`'s settings (the node's own subset)
    preflight_config_json: str  # the gpu group, before a training pod's own containers
    bundle_base64: str

    @property
    def configmap(self) -> str:
        return f"{self.name}-checks"

    def gpu_limit(self, monitor: bool) -> int:
        """The GPUs a pod claims through the device plugin: the Job's per-node count; none for
        the monitor, which must not hold GPUs the jobs need (0: no limit is written)."""
        return 0 if monitor else self.gpus_per_node

    def script(self, monitor: bool) -> str:
        body = RUN % {"bundle": BUNDLE_KEY, "marker": MARKER}
        if monitor:
            return body + f'while true; do run "$1"; sleep {self.interval_s}; done\n'
        return body + 'run "$1"\n'

    @property
    def npd_name(self) -> str:
        return f"{self.name}-npd"

    @property
    def health_script(self) -> str:
        return HEALTH_LOOP % {
            "bundle": BUNDLE_KEY,
            "verdict": VERDICT,
            "interval": HEALTH_INTERVAL_S,
        }

    @property
    def npd_plugin_script(self) -> str:
        return NPD_PLUGIN % {"verdict": VERDICT, "stale": 3 * HEALTH_INTERVAL_S}

    @property
    def npd_monitor_json(self) -> str:
        """NPD's custom-plugin monitor: one condition, set by the plugin's exit code."""
        return NPD_MONITOR % {"condition": NPD_CONDITION}


def _quantity(size: str | None) -> str:
    mib = max(64, size_bytes(size) // (1 << 20)) if size else 8192
    return f"{mib // 1024}Gi" if mib % 1024 == 0 else f"{mib}Mi"


def _check_request(request: K8sRequest) -> None:
    if not DNS_LABEL.fullmatch(request.namespace):
        raise EnvkitError(
            f"--namespace {request.namespace!r} is not a Kubernetes namespace name",
            "use lowercase letters, digits and '-', e.g. gpu-checks",
        )
    for flag, value, low, high in (
        ("--nodes", request.nodes, 1, 10000),
        ("--gpus-per-node", request.gpus_per_node or 0, 0, 64),
        ("--interval", request.interval_s, 60, 7 * 86400),
        ("--timeout", request.timeout_s, 60, 7 * 86400),
    ):
        if not low <= value <= high:
            raise EnvkitError(f"{flag} {value} is out of range", f"choose {low} to {high}")


def _architectures(plan: Plan, platforms: tuple[str, ...] | None) -> tuple[str, ...]:
    """The image's architectures, as Kubernetes labels nodes: those it was built for (the
    engine's, where envkit asked it), else `platforms:`, else this machine's."""
    from envkit.platforms import architecture, this_machine

    return tuple(architecture(p).arch for p in platforms or plan.platforms or (this_machine(),))


def plan_k8s(plan: Plan, request: K8sRequest, platforms: tuple[str, ...] | None = None) -> K8sPlan:
    _check_request(request)
    asked = request.gpus_per_node
    gpus = plan.runtime.gpus_per_node if asked is None else asked
    settings = resolve(plan, True, ChecksRequest(expected_gpus=gpus or None)).in_environment
    # The monitor sees every GPU of its node (it claims none), however many the config asks for.
    monitor = replace(
        resolve(plan, True, ChecksRequest(bench=False)).in_environment, expected_gpus=None
    )
    return K8sPlan(
        project=plan.project,
        name=re.sub(r"[^a-z0-9-]", "-", f"envkit-verify-{plan.project}")[:52].rstrip("-"),
        namespace=request.namespace,
        image=request.image or plan.image.tag,
        nodes=request.nodes,
        gpus_per_node=gpus,
        interval_s=request.interval_s,
        timeout_s=request.timeout_s,
        shm_limit=_quantity(plan.runtime.shm_size),
        node_selector=(("nvidia.com/gpu.present", "true"),) if gpus else (),
        architectures=_architectures(plan, platforms),
        config_json=json.dumps(settings.runner_config(TARGET, None), sort_keys=True),
        monitor_config_json=json.dumps(monitor.runner_config(TARGET, None), sort_keys=True),
        health_config_json=json.dumps(monitor.runner_config("local", None), sort_keys=True),
        preflight_config_json=json.dumps(
            dict(settings.runner_config(TARGET, None), only=["gpu"]), sort_keys=True
        ),
        bundle_base64=base64.b64encode(build_bundle()).decode(),
    )


def render_k8s(k8s: K8sPlan) -> dict[str, str]:
    """The manifests, one object per file. Pure: writes nothing."""
    from envkit import __version__

    env = make_environment()
    return {
        name: env.get_template(f"k8s/{name}.j2").render(k8s=k8s, version=__version__, npd=NPD)
        for name in MANIFESTS
    }


NPD = {"image": NPD_IMAGE, "condition": NPD_CONDITION, "interval_s": HEALTH_INTERVAL_S}
MANIFESTS = (
    "configmap.yaml",
    "job.yaml",
    "daemonset.yaml",
    "npd-config.yaml",
    "npd-serviceaccount.yaml",
    "npd-clusterrole.yaml",
    "npd-clusterrolebinding.yaml",
    "npd-daemonset.yaml",
    "preflight-pod.yaml",
)
