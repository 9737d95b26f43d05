"""`envkit doctor`: check the host before anything is built. The host's facts are gathered once
(doctor/facts.py), then every check judges that record (doctor/findings.py); each finding says
what was looked at, what was found, and the fix. Nothing here changes the host or the engine."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict, dataclass
from typing import Any

from rich.console import Console
from rich.table import Table

from envkit.doctor.facts import gather
from envkit.doctor.findings import Finding, findings
from envkit.errors import EXIT_CHECKS_FAILED, EXIT_OK


@dataclass(frozen=True, kw_only=True)
class DoctorRequest:
    config: str | None = None
    json: bool = False


def run(request: DoctorRequest) -> int:
    """The findings as a table or JSON; exit 1 when one fails."""
    found = findings(gather(request.config))
    if request.json:
        sys.stdout.write(json.dumps(as_json(found), indent=2) + "\n")
    else:
        print_findings(found)
    return EXIT_CHECKS_FAILED if any(f.status == "fail" for f in found) else EXIT_OK


def as_json(found: list[Finding]) -> dict[str, Any]:
    return {
        "ok": not any(f.status == "fail" for f in found),
        "findings": [asdict(f) for f in found],
    }


MARK = {
    "ok": "[green]ok[/]",
    "info": "[blue]info[/]",
    "warn": "[yellow]warn[/]",
    "fail": "[bold red]FAIL[/]",
}


def print_findings(found: list[Finding]) -> None:
    table = Table(title="envkit doctor", title_justify="left", show_lines=True)
    for column in ("", "check", "finding", "fix"):
        table.add_column(column, overflow="fold")
    for f in found:
        table.add_row(MARK[f.status], f.check, f.message, f.fix or "")
    console = Console()
    console.print(table)
    failed = [f.check for f in found if f.status == "fail"]
    console.print(
        f"[bold red]{len(failed)} problem(s) to fix first: {', '.join(failed)}[/]"
        if failed
        else "[green]this host is ready for envkit build / envkit up[/]"
    )
