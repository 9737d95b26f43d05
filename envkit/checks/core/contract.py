"""The report's shape (docs/architecture.md, "Report schema"), as TypedDicts: the checks produce
it and envkit's verify and report modules read it, so both sides are type-checked against one
definition. Standard library only, like the rest of this package (it runs on Python 3.8 too)."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, TypedDict

# "pass" is a keyword, so the counts are spelled the functional way.
Counts = TypedDict("Counts", {"pass": int, "fail": int, "skip": int, "error": int})


class Metric(TypedDict):
    """A figure and the bounds it is judged by: `threshold` on its fraction of `peak`, or
    `minimum`/`maximum` on the value itself (bytes of /dev/shm, an ECC count, a temperature).
    A counter ("count" unit) may have none: history reports any rise of it."""

    name: str
    value: float
    unit: str
    peak: Optional[float]
    fraction_of_peak: Optional[float]
    threshold: Optional[float]  # the minimum acceptable fraction of peak
    minimum: Optional[float]  # the smallest acceptable value
    maximum: Optional[float]  # the largest acceptable value


class CheckResult(TypedDict):
    id: str
    group: str  # cuda, tensor, autograd, multigpu, system, bench, or user
    status: str  # pass | fail | skip | error
    duration_s: float
    message: str
    metrics: List[Metric]


class TargetReport(TypedDict):
    """What the runner writes for one target (envkit adds nothing but the target's name)."""

    schema_version: int
    target: str
    started_at: str
    duration_s: float
    environment: Dict[str, Any]  # the fingerprint: versions, GPUs, driver; open-ended
    summary: Counts
    checks: List[CheckResult]


def check_result(
    check_id: str, status: str, duration_s: float, message: str, metrics: List[Metric]
) -> CheckResult:
    """The one constructor of a check's result, for the runner and its error paths alike."""
    return {
        "id": check_id,
        "group": check_id.split(".", 1)[0],
        "status": status,
        "duration_s": duration_s,
        "message": message,
        "metrics": metrics,
    }


def empty_counts() -> Counts:
    return {"pass": 0, "fail": 0, "skip": 0, "error": 0}
