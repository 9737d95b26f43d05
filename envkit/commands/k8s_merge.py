"""`envkit k8s merge LOGS...`: the reports in the pods' logs (`kubectl logs`) merged into envkit's
usual report, one row per node; exit codes as `envkit verify`."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

from envkit.checks.core.text import for_terminal
from envkit.cluster.merge import merge, reports_in
from envkit.errors import EnvkitError, FieldError
from envkit.files import read_regular
from envkit.report.emit import emit_reports
from envkit.report.table import print_report
from envkit.verify.combine import exit_code
from envkit.verify.request import ReportsRequest


@dataclass(frozen=True, kw_only=True)
class K8sMergeRequest:
    logs: tuple[str, ...]  # files of `kubectl logs` output ('-': stdin)
    nodes: tuple[str, ...] = ()  # nodes that must report
    expect: int | None = None  # how many nodes must report
    reports: ReportsRequest = field(default_factory=ReportsRequest)


LOG_LIMIT = 2 * 1024 * 1024 * 1024  # a cluster's worth of pod logs, bounded


def _lines(paths: list[str]) -> list[tuple[str, str]]:
    """(file:line, text) of every log given: regular files (or stdin) under a size cap."""
    lines: list[tuple[str, str]] = []
    for spec in paths:
        if spec == "-":
            data = sys.stdin.buffer.read(LOG_LIMIT + 1)
            if len(data) > LOG_LIMIT:
                raise EnvkitError(f"stdin is over the {LOG_LIMIT}-byte limit", "pass files")
        else:
            try:
                data = read_regular(Path(spec), LOG_LIMIT, "log file")
            except FieldError as exc:
                raise EnvkitError(exc.problem, "pass files of `kubectl logs` output") from None
        text = data.decode("utf-8", errors="replace")
        name = "stdin" if spec == "-" else spec
        lines += [(f"{name}:{n}", line) for n, line in enumerate(text.splitlines(), 1)]
    return lines


def run(request: K8sMergeRequest) -> int:
    nodes, expect, outputs = request.nodes, request.expect, request.reports
    reports, skipped = reports_in(_lines(list(request.logs)))
    if not reports and not nodes and not expect:
        raise EnvkitError(
            "no envkit report in the logs given",
            "collect them with `kubectl logs -l envkit.io/run=NAME --tail=-1 --prefix`",
        )
    combined = merge(reports, nodes, expect)
    print_report(combined, quiet=outputs.quiet)
    if skipped:
        shown = "".join(f"  {for_terminal(line)}\n" for line in skipped[:5])
        more = f"  (and {len(skipped) - 5} more)\n" if len(skipped) > 5 else ""
        sys.stderr.write(f"warning: {len(skipped)} marked line(s) skipped:\n{shown}{more}")
    emit_reports(combined, outputs)
    return exit_code(combined)
