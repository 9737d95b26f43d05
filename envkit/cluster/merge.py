"""Reports carried back in pod logs (`kubectl logs --prefix`, or any log collector's files) into
envkit's combined report: one row per node, the latest report of each node (a DaemonSet prints
one per round), and `unreachable` for every expected node that never reported.

Logs are data from elsewhere: a report counts only as a whole line (`MARKER JSON`, after
kubectl's `[pod/NAME/CONTAINER] ` prefix where there is one), checked against the report's
shape; a pod's report must say it ran in that pod; and two pods (or two files) reporting for one
node is an error naming both, so a forged row cannot silently replace a failing node's."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from envkit.checks.core.contract import TargetReport
from envkit.cluster.k8s import MARKER
from envkit.errors import EnvkitError
from envkit.verify.agreement import judge_nodes
from envkit.verify.combine import CombinedReport, combine
from envkit.verify.reports import ReportShapeError, checked_report, strict_json

NEVER_REPORTED = (
    "never reported: its pod was not scheduled, failed before the suite ended, or its logs "
    "were not collected (kubectl describe pod / kubectl logs --previous)"
)
LINE = re.compile(
    r"(?:\[pod/(?P<pod>[a-z0-9][a-z0-9.-]{0,252})/[A-Za-z0-9._-]{1,253}\] )?"
    + re.escape(MARKER)
    + r" (?P<json>.*)"
)
TARGET = re.compile(r"k8s://node/[a-z0-9][a-z0-9.-]{0,252}")


@dataclass(frozen=True)
class Found:
    report: TargetReport
    source: str  # the pod it came from, else the file
    where: str  # file:line


def _report(where: str, line: str) -> tuple[TargetReport, str | None] | str:
    """(the report, its pod), or why the line is not one."""
    found = LINE.fullmatch(line.rstrip("\r"))
    if found is None:
        return f"{where}: a report marker inside another line (not a report)"
    try:
        report = checked_report(strict_json(found["json"]))
    except RecursionError:
        return f"{where}: a report nested too deeply"
    except (ValueError, ReportShapeError) as exc:
        return f"{where}: not a whole report, cut short or damaged ({exc})"
    if not TARGET.fullmatch(report["target"]):
        return f"{where}: target {report['target']!r} is not k8s://node/NAME"
    return report, found["pod"]


def reports_in(lines: Iterable[tuple[str, str]]) -> tuple[dict[str, TargetReport], list[str]]:
    """The last report of each node from (file:line, text) pairs, and why each line that carried
    the marker was not taken."""
    found: dict[str, Found] = {}
    skipped: list[str] = []
    for where, line in lines:
        if MARKER not in line:
            continue
        read = _report(where, line)
        if isinstance(read, str):
            skipped.append(read)
            continue
        report, pod = read
        host = report["environment"].get("hostname")
        if pod is not None and host is not None and host != pod:
            raise EnvkitError(
                f"{where}: pod {pod} printed a report made on host {host!r}",
                "a pod's report is made in that pod: collect the logs again, or find who wrote it",
            )
        source = pod or where.rsplit(":", 1)[0]
        earlier = found.get(report["target"])
        if earlier is not None and earlier.source != source:
            raise EnvkitError(
                f"two reports for {report['target']}: from {earlier.source} ({earlier.where}) and "
                f"from {source} ({where})",
                "merge the logs of one Job or DaemonSet at a time: each node reports from one pod",
            )
        found[report["target"]] = Found(report, source, where)
    return {target: item.report for target, item in found.items()}, skipped


def merge(
    reports: dict[str, TargetReport], nodes: tuple[str, ...], expect: int | None
) -> CombinedReport:
    missing = {f"k8s://node/{node}": NEVER_REPORTED for node in nodes}
    for name in reports:
        missing.pop(name, None)
    for index in range(max(0, (expect or 0) - len(reports) - len(missing))):
        missing[f"k8s://node/unknown-{index + 1}"] = NEVER_REPORTED
    return combine(judge_nodes(list(reports.values())), missing)
