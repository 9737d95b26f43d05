"""Kubernetes manifests: valid against the schemas of two Kubernetes releases (strict: no field
the API would drop), golden for an example, the bundle carried byte for byte, refusals before
anything is written; and the merge of pod logs into the usual report and exit code."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from envkit.cluster.k8s import MANIFESTS, MARKER, NPD_CONDITION, plan_k8s, render_k8s
from envkit.verify.bundle import build_bundle
from envkit.verify.request import K8sRequest
from tests.helpers import REPO, copy_example, envkit, plan_example

KUBERNETES = ("1.30.0", "1.37.0")  # kubernetes-validate 1.37.0 ships schemas 1.25 to 1.37
GOLDEN = REPO / "tests" / "golden-k8s"
REGENERATE = os.environ.get("ENVKIT_REGEN_GOLDEN") == "1"


def _docs(example: str, **request: Any) -> dict[str, dict[str, Any]]:
    files = render_k8s(plan_k8s(plan_example(example), K8sRequest(**request)))
    return {name: yaml.safe_load(text) for name, text in files.items()}


@pytest.mark.parametrize("version", KUBERNETES)
@pytest.mark.parametrize("example", ["pytorch-2-tuna", "debian-bookworm-cpu", "team-of-three"])
def test_manifests_pass_the_kubernetes_schemas(example: str, version: str) -> None:
    for name, doc in _docs(example, nodes=3, namespace="gpu-checks").items():
        try:
            kubernetes_validate.validate(doc, version, strict=True)
        except kubernetes_validate.ValidationError as exc:
            pytest.fail(f"{example}/{name} is invalid for Kubernetes {version}: {exc}")


def test_a_broken_manifest_is_caught_by_the_same_validation() -> None:
    job = _docs("pytorch-2-tuna")["job.yaml"]
    job["spec"]["completions"] = "four"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(job, KUBERNETES[0], strict=True)


def test_the_job_asks_the_scheduler_for_one_pod_per_node_with_its_gpus() -> None:
    job = _docs("pytorch-2-tuna", nodes=4, gpus_per_node=8)["job.yaml"]
    spec = job["spec"]
    assert spec["completionMode"] == "Indexed" and spec["completions"] == spec["parallelism"] == 4
    pod = spec["template"]["spec"]
    anti = pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert anti[0]["topologyKey"] == "kubernetes.io/hostname"
    container = pod["containers"][0]
    assert container["resources"]["limits"]["nvidia.com/gpu"] == 8
    config = json.loads(container["args"][0])
    assert config["target"] == "k8s://node/$(NODE_NAME)" and config["expected_gpus"] == 8
    assert config["expected_torch"] == "2.5.1"


def test_the_monitor_claims_no_gpus_and_skips_benchmarks() -> None:
    pod = _docs("pytorch-2-tuna", interval_s=600)["daemonset.yaml"]["spec"]["template"]["spec"]
    container = pod["containers"][0]
    assert "resources" not in container
    assert {"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"} in container["env"]
    config = json.loads(container["args"][0])
    assert config["bench"] is False and config["expected_gpus"] is None
    assert "sleep 600" in container["command"][2]


def test_the_node_condition_runs_health_npd_beside_node_problem_detector() -> None:
    docs = _docs("pytorch-2-tuna", gpus_per_node=8)
    pod = docs["npd-daemonset.yaml"]["spec"]["template"]["spec"]
    health, npd = pod["containers"]
    assert "resources" not in health  # GPUs seen, none claimed
    assert {"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"} in health["env"]
    assert "health --npd" in health["command"][2]
    assert json.loads(health["args"][0])["bench"] is False
    monitor_path = npd["command"][2].split("=", 1)[1]
    config = docs["npd-config.yaml"]["data"]
    monitor = json.loads(config[Path(monitor_path).name])
    assert monitor["plugin"] == "custom" and monitor["conditions"][0]["type"] == NPD_CONDITION
    plugin = monitor["rules"][0]["path"]
    assert Path(plugin).name in config and plugin.startswith("/config/")
    assert monitor["pluginConfig"]["max_output_length"] == 80
    mounts = {m["name"]: m["mountPath"] for m in npd["volumeMounts"]}
    assert mounts["npd-config"] == "/config" and mounts["status"] == "/status"
    assert pod["serviceAccountName"] == docs["npd-serviceaccount.yaml"]["metadata"]["name"]
    binding = docs["npd-clusterrolebinding.yaml"]
    assert binding["roleRef"]["name"] == docs["npd-clusterrole.yaml"]["metadata"]["name"]
    verbs = {r["resources"][0]: r["verbs"] for r in docs["npd-clusterrole.yaml"]["rules"]}
    assert verbs["nodes/status"] == ["patch"]


def test_the_preflight_runs_the_gpu_group_on_the_pods_own_gpus_before_its_containers() -> None:
    pod = _docs("pytorch-2-tuna", gpus_per_node=4)["preflight-pod.yaml"]["spec"]
    init = pod["initContainers"][0]
    assert init["resources"]["limits"]["nvidia.com/gpu"] == 4
    assert pod["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == 4
    config = json.loads(init["args"][0])
    assert config["only"] == ["gpu"] and config["expected_gpus"] == 4
    assert pod["restartPolicy"] == "Never"  # a failed preflight fails the pod


def test_the_configmap_carries_the_bundle_byte_for_byte() -> None:
    data = _docs("debian-bookworm-cpu")["configmap.yaml"]["binaryData"]["envkit-checks.zip"]
    assert base64.b64decode(data) == build_bundle()


def test_job_and_daemonset_match_their_golden_files() -> None:
    files = render_k8s(plan_k8s(plan_example("pytorch-2-tuna"), K8sRequest(nodes=2)))
    # The ConfigMap follows the checks' code.
    for name in ("job.yaml", "daemonset.yaml", "npd-daemonset.yaml", "preflight-pod.yaml"):
        if REGENERATE:
            GOLDEN.mkdir(exist_ok=True)
            (GOLDEN / name).write_text(files[name])
        assert files[name] == (GOLDEN / name).read_text(), f"{name} differs: run `make golden`"


@pytest.mark.parametrize(
    ("args", "phrase"),
    [
        (["--namespace", "GPU_checks"], "is not a Kubernetes namespace name"),
        (["--nodes", "0"], "--nodes 0 is out of range"),
        (["--interval", "5"], "--interval 5 is out of range"),
    ],
)
def test_bad_options_are_refused_and_nothing_is_written(
    tmp_path: Path, args: list[str], phrase: str
) -> None:
    config = copy_example("pytorch-2-tuna", tmp_path)
    done = envkit("k8s", "render", "--config", str(config), *args, cwd=tmp_path)
    assert done.returncode == 2 and phrase in done.stderr, done.stderr
    assert not (config.parent / "envkit-k8s").exists()


def test_render_writes_and_refuses_to_overwrite_a_file_it_did_not_write(tmp_path: Path) -> None:
    config = copy_example("pytorch-2-tuna", tmp_path)
    done = envkit("k8s", "render", "--config", str(config), "--nodes", "2", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (config.parent / "envkit-k8s").iterdir()) == sorted(MANIFESTS)
    again = envkit("k8s", "render", "--config", str(config), cwd=tmp_path)
    assert again.returncode == 0, again.stderr  # its own files are replaced
    (config.parent / "envkit-k8s" / "job.yaml").write_text("kind: Mine\n")
    refused = envkit("k8s", "render", "--config", str(config), cwd=tmp_path)
    assert refused.returncode == 2 and "was not written by envkit" in refused.stderr
    assert (config.parent / "envkit-k8s" / "job.yaml").read_text() == "kind: Mine\n"


# ------------------------------------------------------------------------------ merge


def _report(node: str, fail: int = 0) -> dict[str, Any]:
    checks = [
        {"id": "tensor.creation", "group": "tensor", "status": "pass", "duration_s": 0.1,
         "message": "ok\nsecond line", "metrics": []},
    ] + [
        {"id": "cuda.available", "group": "cuda", "status": "fail", "duration_s": 0.1,
         "message": "no GPU", "metrics": []}
    ] * fail  # fmt: skip
    return {
        "schema_version": 1, "target": f"k8s://node/{node}", "started_at": "2026-11-23T00:00:00Z",
        "duration_s": 1.0, "environment": {"torch": "2.5.1"},
        "summary": {"pass": 1, "fail": fail, "skip": 0, "error": 0}, "checks": checks,
    }  # fmt: skip


def _log_line(report: dict[str, Any], pod: str) -> str:
    # what the pod prints (its JSON with newlines removed), with kubectl's --prefix
    return f"[pod/{pod}/checks] {MARKER} " + json.dumps(report, indent=2).replace("\n", "")


def test_merge_gives_one_row_per_node_and_the_usual_exit_codes(tmp_path: Path) -> None:
    logs = tmp_path / "logs.txt"
    logs.write_text(
        "\n".join(
            [
                "[pod/a/checks] some output of the suite",
                _log_line(_report("gpu-1"), "a"),
                _log_line(_report("gpu-2", fail=1), "b"),
                _log_line(_report("gpu-3"), "c")[:80],  # cut short by a log limit
            ]
        )
    )
    out = tmp_path / "merged.json"
    done = envkit("k8s", "merge", str(logs), "--json-file", str(out), cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    merged = json.loads(out.read_text())
    rows = {row["target"]: row["state"] for row in merged["per_target"]}
    assert rows == {"k8s://node/gpu-1": "passed", "k8s://node/gpu-2": "failed"}
    assert "1 marked line(s) skipped" in done.stderr and "not a whole report" in done.stderr
    message = merged["targets"][0]["checks"][0]["message"]
    assert message == "ok\nsecond line"  # newlines inside strings survive the one-line form

    healthy = tmp_path / "healthy.txt"
    healthy.write_text(_log_line(_report("gpu-1"), "a") + "\n")
    assert envkit("k8s", "merge", str(healthy), cwd=tmp_path).returncode == 0
    missing = envkit(
        "k8s", "merge", str(healthy), "--expect-node", "gpu-1", "--expect-node", "gpu-9",
        "--json-file", str(out), cwd=tmp_path,
    )  # fmt: skip
    assert missing.returncode == 3
    assert json.loads(out.read_text())["unreachable"][0]["target"] == "k8s://node/gpu-9"
    short = envkit("k8s", "merge", str(healthy), "--expect", "3", cwd=tmp_path)
    assert short.returncode == 3 and "unknown-2" in short.stdout


def test_the_latest_report_of_a_node_wins(tmp_path: Path) -> None:
    logs = tmp_path / "monitor.txt"
    logs.write_text(
        _log_line(_report("gpu-1", fail=1), "m") + "\n" + _log_line(_report("gpu-1"), "m") + "\n"
    )
    assert envkit("k8s", "merge", str(logs), cwd=tmp_path).returncode == 0


def test_merge_without_any_report_says_how_to_collect_logs(tmp_path: Path) -> None:
    logs = tmp_path / "empty.txt"
    logs.write_text("nothing here\n")
    done = envkit("k8s", "merge", str(logs), cwd=tmp_path)
    assert done.returncode == 2 and "kubectl logs -l envkit.io/run=" in done.stderr
    gone = envkit("k8s", "merge", str(tmp_path / "nope.txt"), cwd=tmp_path)
    assert gone.returncode == 2 and "nope.txt" in gone.stderr
