"""Reports carried back in pod logs (`kubectl logs --prefix`, or any log collector's files) into
envkit's combined report: one row per node, the latest report of each node (a DaemonSet prints
one per round), and `unreachable` for every expected node that never reported."""

from __future__ import annotations

import json
from collections.abc import Iterable

from envkit.checks.contract import TargetReport
from envkit.cluster.k8s import MARKER
from envkit.verify.combine import CombinedReport, combine

NEVER_REPORTED = (
    "never reported: its pod was not scheduled, failed before the suite ended, or its logs "
    "were not collected (kubectl describe pod / kubectl logs --previous)"
)


def reports_in(lines: Iterable[str]) -> tuple[dict[str, TargetReport], int]:
    """The last report of each target, and how many marked lines could not be read."""
    found: dict[str, TargetReport] = {}
    unreadable = 0
    for line in lines:
        _, marker, rest = line.partition(MARKER + " ")
        if not marker:
            continue
        try:
            report = json.loads(rest)
            found[str(report["target"])] = report
        except (ValueError, KeyError, TypeError):
            unreadable += 1  # a line cut short by a log rotation or a size limit
    return found, unreadable


def merge(
    reports: dict[str, TargetReport], nodes: tuple[str, ...], expect: int | None
) -> CombinedReport:
    missing = {f"k8s://node/{node}": NEVER_REPORTED for node in nodes}
    for name in reports:
        missing.pop(name, None)
    shortfall = (expect or 0) - len(reports) - len(missing)
    for index in range(max(0, shortfall)):
        missing[f"k8s://node/unknown-{index + 1}"] = NEVER_REPORTED
    return combine(list(reports.values()), missing)
