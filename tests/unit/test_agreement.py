"""Nodes of one cluster run compared with each other: the odd node's driver, VBIOS, CUDA, NCCL
or NCCL_* setting fails gpu.node_agreement there, naming what the others have."""

from __future__ import annotations

import copy
import json
from typing import Any

from envkit.checks.core.contract import TargetReport
from envkit.cluster.k8s import MARKER
from envkit.cluster.merge import merge, reports_in
from envkit.verify.agreement import CHECK_ID, judge_nodes

ENV = {
    "driver": "550.54.15",
    "vbios": ["96.00.99.00.01", "96.00.99.00.01"],
    "cuda_runtime": "12.4",
    "nccl": "2.21.5",
    "nccl_env": {"NCCL_IB_HCA": "mlx5"},
}


def node(name: str, **changes: Any) -> TargetReport:
    environment = {**copy.deepcopy(ENV), **changes}
    return {
        "schema_version": 1,
        "target": f"slurm://node/{name}",
        "started_at": "2026-11-24T00:00:00Z",
        "duration_s": 1.0,
        "environment": environment,
        "summary": {"pass": 1, "fail": 0, "skip": 0, "error": 0},
        "checks": [
            {"id": "cuda.available", "group": "cuda", "status": "pass", "duration_s": 0.1,
             "message": "", "metrics": []}
        ],
    }  # fmt: skip


def verdicts(reports: list[TargetReport]) -> dict[str, tuple[str, str]]:
    found: dict[str, tuple[str, str]] = {}
    for report in judge_nodes(reports):
        row = next(c for c in report["checks"] if c["id"] == CHECK_ID)
        found[report["target"].rsplit("/", 1)[-1]] = (row["status"], row["message"])
    return found


def test_the_odd_node_is_named_with_what_the_others_have() -> None:
    got = verdicts([node("n1"), node("n2", driver="535.104.05"), node("n3")])
    assert got["n1"][0] == got["n3"][0] == "pass"
    assert got["n2"] == ("fail", 'driver "535.104.05" here, "550.54.15" on 2 of 3 nodes')


def test_every_field_counts_nccl_environment_and_vbios_too() -> None:
    odd_env = node("n3", nccl_env={"NCCL_IB_HCA": "mlx5", "NCCL_P2P_DISABLE": "1"})
    odd_vbios = node("n4", vbios=["96.00.74.00.1c", "96.00.99.00.01"])
    got = verdicts([node("n1"), node("n2"), odd_env, odd_vbios, node("n5")])
    assert got["n3"][0] == "fail" and "NCCL_* environment" in got["n3"][1]
    assert "NCCL_P2P_DISABLE" in got["n3"][1]
    assert got["n4"][0] == "fail" and "VBIOS" in got["n4"][1]
    assert got["n1"][0] == "pass" and "agree with the run's other 4" in got["n1"][1]


def test_a_tie_names_every_node_and_one_node_is_not_judged() -> None:
    got = verdicts([node("n1", nccl="2.18.3"), node("n2")])
    assert got["n1"][0] == got["n2"][0] == "fail"
    assert "no majority" in got["n1"][1] and "n2" in got["n1"][1]
    alone = judge_nodes([node("n1")])
    assert all(c["id"] != CHECK_ID for c in alone[0]["checks"])


def test_the_kubernetes_merge_adds_the_verdict_and_counts_it() -> None:
    def line(pod: str, report: TargetReport) -> tuple[str, str]:
        return f"logs:{pod}", f"[pod/{pod}/checks] {MARKER} " + json.dumps(report)

    lines = [
        line("pod-a", {**node("n1"), "target": "k8s://node/n1"}),
        line("pod-b", {**node("n2", cuda_runtime="12.1"), "target": "k8s://node/n2"}),
        line("pod-c", {**node("n3"), "target": "k8s://node/n3"}),
    ]
    reports, skipped = reports_in(lines)
    assert skipped == []
    combined = merge(reports, (), None)
    assert combined["summary"]["fail"] == 1
    n2 = next(t for t in combined["targets"] if t["target"] == "k8s://node/n2")
    assert n2["summary"]["fail"] == 1 and "CUDA runtime" in n2["checks"][-1]["message"]
