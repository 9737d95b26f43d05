"""Many targets' reports into one (schema in docs/architecture.md), and the exit code CI trusts."""

from __future__ import annotations

from typing import TypedDict

from envkit import __version__
from envkit.checks import SCHEMA_VERSION
from envkit.checks.core.contract import STATUSES, Counts, TargetReport, TargetState, empty_counts

# One row per target; "pass" is a keyword, hence the functional spelling. `seconds` is the wall
# time envkit spent on the target, connection included (absent for a target never started).
TargetRow = TypedDict(
    "TargetRow",
    {
        "target": str,
        "state": TargetState,
        "pass": int,
        "fail": int,
        "skip": int,
        "error": int,
        "seconds": float,
    },
    total=False,
)


class CombinedReport(TypedDict):
    schema_version: int
    envkit_version: str
    summary: dict[str, int]  # the four counts, plus targets and unreachable
    per_target: list[TargetRow]
    targets: list[TargetReport]
    unreachable: list[dict[str, str]]  # target, message


def _row(target: str, counts: Counts, state: TargetState | None = None) -> TargetRow:
    """A target's counts and its verdict: STATE where given, else failed or passed by them."""
    return {
        "target": target,
        "state": state or ("failed" if counts["fail"] or counts["error"] else "passed"),
        "pass": counts["pass"],
        "fail": counts["fail"],
        "skip": counts["skip"],
        "error": counts["error"],
    }


def _per_target(
    reports: list[TargetReport], unreachable: dict[str, str], seconds: dict[str, float]
) -> list[TargetRow]:
    """One row per target in the order given: its counts, its verdict, the time envkit spent."""
    rows = [_row(report["target"], report["summary"]) for report in reports]
    rows += [_row(name, empty_counts(), "unreachable") for name in unreachable]
    for row in rows:
        if row["target"] in seconds:
            row["seconds"] = round(seconds[row["target"]], 3)
    return rows


def combine(
    reports: list[TargetReport],
    unreachable: dict[str, str],
    seconds: dict[str, float] | None = None,
) -> CombinedReport:
    summary: dict[str, int] = {s: sum(r["summary"][s] for r in reports) for s in STATUSES}
    return {
        "schema_version": SCHEMA_VERSION,
        "envkit_version": __version__,
        "summary": {
            **summary,
            "targets": len(reports) + len(unreachable),
            "unreachable": len(unreachable),
        },
        "per_target": _per_target(reports, unreachable, seconds or {}),
        "targets": reports,
        "unreachable": [{"target": name, "message": why} for name, why in unreachable.items()],
    }


def exit_code(combined: CombinedReport) -> int:
    from envkit.errors import EXIT_CHECKS_FAILED, EXIT_OK, EXIT_UNREACHABLE

    if combined["unreachable"]:
        return EXIT_UNREACHABLE  # nothing can be vouched for on a target we could not reach
    summary = combined["summary"]
    return EXIT_CHECKS_FAILED if summary["fail"] or summary["error"] else EXIT_OK
