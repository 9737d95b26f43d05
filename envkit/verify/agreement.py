"""Nodes of one cluster run compared with each other (Slurm and Kubernetes merges): the driver,
the GPUs' VBIOS, the CUDA runtime, NCCL and the NCCL_* environment must be the same everywhere,
or collectives across them misbehave in ways no single node's suite sees. The odd node is
named, with what the others have. Nodes are compared with those of their own architecture
(a run over x86 and Grace nodes has two drivers and two CUDA builds by design)."""

from __future__ import annotations

import json
from collections import Counter

from envkit.checks.core.contract import CheckResult, TargetReport, check_result

CHECK_ID = "gpu.node_agreement"
REFERENCE = "the same facts on the run's other nodes: the majority's value"
FIELDS = {
    "driver": "driver",
    "vbios": "VBIOS",
    "cuda_runtime": "CUDA runtime",
    "nccl": "NCCL",
    "nccl_env": "NCCL_* environment",
}


def _value(report: TargetReport, key: str) -> str:
    return json.dumps(report["environment"].get(key), sort_keys=True)


def disagreements(reports: list[TargetReport]) -> dict[str, list[str]]:
    """For each node, what it has that the majority of the run does not (empty: it agrees)."""
    found: dict[str, list[str]] = {r["target"]: [] for r in reports}
    for key, label in FIELDS.items():
        values = Counter(_value(r, key) for r in reports)
        if len(values) < 2:
            continue
        (top, top_count), *rest = values.most_common()
        tie = rest and rest[0][1] == top_count
        for report in reports:
            mine = _value(report, key)
            if tie:
                others = ", ".join(
                    f"{r['target'].rsplit('/', 1)[-1]}: {_value(r, key)}" for r in reports
                )
                found[report["target"]].append(f"{label} differs with no majority ({others})")
            elif mine != top:
                found[report["target"]].append(
                    f"{label} {mine} here, {top} on {top_count} of {len(reports)} nodes"
                )
    return found


def with_check(report: TargetReport, result: CheckResult) -> TargetReport:
    """The report with one more check result, its summary counted."""
    report["checks"].append(result)
    report["summary"][result["status"]] += 1
    return report


def _machine(report: TargetReport) -> str:
    return str(report["environment"].get("machine") or "unknown")


def judge_nodes(reports: list[TargetReport]) -> list[TargetReport]:
    """Each report with gpu.node_agreement added, judged among the nodes of its architecture;
    runs of one node are left as they are."""
    if len(reports) < 2:
        return reports
    groups: dict[str, list[TargetReport]] = {}
    for report in reports:
        groups.setdefault(_machine(report), []).append(report)
    judged = {id(r): r for r in reports}
    for machine, group in groups.items():
        if len(group) == 1:
            others = ", ".join(f"{len(g)} {m}" for m, g in groups.items() if m != machine)
            message = (
                f"the run's only {machine} node: nothing of its architecture to compare with "
                f"(the others, {others}, are compared among themselves)"
            )
            result = check_result(CHECK_ID, "skip", 0.0, message, [])
            judged[id(group[0])] = with_check(group[0], result)
            continue
        for report in _judged_group(group, len(groups) > 1):
            judged[id(report)] = report
    return [judged[id(r)] for r in reports]


def _judged_group(reports: list[TargetReport], mixed: bool) -> list[TargetReport]:
    odd = disagreements(reports)
    kind = f" {_machine(reports[0])}" if mixed else ""
    judged = []
    for report in reports:
        if problems := odd[report["target"]]:
            result = check_result(CHECK_ID, "fail", 0.0, "; ".join(problems), [])
        else:
            agreed = ", ".join(FIELDS.values())
            message = f"{agreed} agree with the run's other {len(reports) - 1}{kind} node(s)"
            result = check_result(CHECK_ID, "pass", 0.0, message, [])
        judged.append(with_check(report, result))
    return judged
