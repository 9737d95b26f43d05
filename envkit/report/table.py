"""The readable report: a table per target, grouped by area, every skip with its reason.
Every string from a target (ids, messages, versions, names) reaches the terminal as plain text:
control characters escaped (checks/core/text.py), never read as Rich markup."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from envkit.checks.core.text import for_terminal
from envkit.report import check_order

if TYPE_CHECKING:
    from envkit.checks.core.contract import CheckResult
    from envkit.verify.combine import CombinedReport, TargetRow


STYLE = {"pass": "green", "fail": "bold red", "error": "bold magenta", "skip": "yellow"}


def _detail(check: CheckResult) -> str:
    parts = [check["message"].splitlines()[0] if check["message"] else ""]
    for metric in check.get("metrics", []):
        if metric["name"].endswith("_best"):
            continue
        if (fraction := metric.get("fraction_of_peak")) is not None:
            parts.append(f"[{metric['name']}: {fraction:.0%} of peak]")
    return " ".join(p for p in parts if p)


def _counts(s: Any) -> str:
    """The four counts of a summary, as both the per-target and the total line say them."""
    return f"{s['pass']} passed, {s['fail']} failed, {s['error']} errors, {s['skip']} skipped"


def plain(value: object) -> Any:
    """A Rich cell that shows `value` as it is: no markup, control characters escaped."""
    from rich.text import Text

    return Text(for_terminal(value))


def _per_target_table(rows: list[TargetRow]) -> Any:
    from rich.table import Table

    table = Table(title="per target", title_justify="left")
    for column in ("target", "state", "pass", "fail", "error", "skip", "time"):
        table.add_column(column, justify="left" if column in ("target", "state") else "right")
    colour = {"passed": "green", "failed": "bold red", "unreachable": "bold red"}
    for row in rows:
        table.add_row(
            plain(row["target"]),
            f"[{colour[row['state']]}]{row['state']}[/]",
            *(str(row[k]) for k in ("pass", "fail", "error", "skip")),
            f"{row['seconds']:.1f}s" if "seconds" in row else "",
        )
    return table


def print_report(combined: CombinedReport, quiet: bool = False) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console()
    for report in combined["targets"]:
        env = report.get("environment") or {}
        gpus = ", ".join(g["name"] for g in env.get("gpus") or []) or "no GPU"
        title = (
            f"{report['target']}: torch {env.get('torch')} · CUDA {env.get('cuda_runtime')} · "
            f"driver {env.get('driver')} · {gpus}"
        )
        table = Table(title=plain(title), title_justify="left", show_lines=False)
        for column in ("check", "status", "time", "detail"):
            table.add_column(
                column, justify="right" if column == "time" else "left", overflow="fold"
            )
        current = None
        for check in sorted(report["checks"], key=check_order):
            if quiet and check["status"] == "pass":
                continue
            if check["group"] != current:
                current = check["group"]
                table.add_section()
            status = check["status"]
            table.add_row(
                plain(check["id"]),
                f"[{STYLE.get(status, 'bold magenta')}]{escape(for_terminal(status))}[/]",
                f"{check['duration_s']:.2f}s",
                plain(_detail(check)),
            )
        console.print(table)
        console.print(f"  {_counts(report['summary'])} in {report.get('duration_s', 0):.1f}s")
    for item in combined.get("unreachable", []):
        console.print("[bold red]unreachable[/]", plain(f"{item['target']}: {item['message']}"))
    if len(combined.get("per_target", [])) > 1:
        console.print(_per_target_table(combined["per_target"]))
    total = combined["summary"]
    console.print(f"{_counts(total)} on {total['targets']} target(s)")
