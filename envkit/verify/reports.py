"""Every target's report enters envkit here, whatever carried it (docker exec, SSH, a throwaway
container, this machine, a pod's log, a Slurm node's file on a shared filesystem): checked
against the report's shape (checks/core/contract.py) before envkit reads a field of it, so the
writers, the history and the exit code never meet a string where a number belongs, a missing
key, or a figure that is not finite."""

from __future__ import annotations

import json
import math
from typing import Any, cast

from envkit.checks.core.contract import STATUSES, TargetReport

MAX_CHECKS = 100_000
MAX_TEXT = 1 << 20


class ReportShapeError(ValueError):
    """What is wrong, and where in the report."""


def strict_json(text: str) -> Any:
    """TEXT's JSON value; a ValueError for NaN and Infinity, which JSON does not have."""
    return json.loads(text, parse_constant=_no_constant)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def checked_text(value: Any, where: str, limit: int = 4096) -> str:
    if not isinstance(value, str) or len(value) > limit:
        raise ReportShapeError(f"{where}: expected text (at most {limit} characters)")
    return value


def _number(value: Any, where: str, optional: bool = False) -> float | None:
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ReportShapeError(f"{where}: expected a number, found {type(value).__name__}")
    try:
        number = float(value)
    except OverflowError:  # an integer of hundreds of digits: JSON allows it, a float does not
        raise ReportShapeError(f"{where}: a number too large to be a figure") from None
    if not math.isfinite(number):
        raise ReportShapeError(f"{where}: {value!r} is not a finite figure")
    return number


def _metric(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ReportShapeError(f"{where}: expected an object")
    metric = {
        "name": checked_text(value.get("name"), f"{where}.name", 200),
        "value": _number(value.get("value"), f"{where}.value"),
        "unit": checked_text(value.get("unit"), f"{where}.unit", 50),
    }
    for key in ("peak", "fraction_of_peak", "threshold", "minimum", "maximum"):
        metric[key] = _number(value.get(key), f"{where}.{key}", optional=True)
    return metric


def _check(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ReportShapeError(f"{where}: expected an object")
    status = value.get("status")
    if status not in STATUSES:
        raise ReportShapeError(f"{where}.status: {status!r} is not one of {', '.join(STATUSES)}")
    check_id = checked_text(value.get("id"), f"{where}.id", 200)
    metrics = value.get("metrics", [])
    if not isinstance(metrics, list):
        raise ReportShapeError(f"{where}.metrics: expected a list")
    return {
        "id": check_id,
        "group": check_id.split(".", 1)[0],
        "status": status,
        "duration_s": _number(value.get("duration_s", 0.0), f"{where}.duration_s"),
        "message": checked_text(value.get("message", ""), f"{where}.message", MAX_TEXT),
        "metrics": [_metric(m, f"{where}.metrics[{n}]") for n, m in enumerate(metrics)],
    }


def checked_report(value: Any) -> TargetReport:
    """The report rebuilt from checked fields only (anything else it carried is dropped, but
    the environment, which is open-ended and shown as text); ReportShapeError otherwise."""
    if not isinstance(value, dict):
        raise ReportShapeError("a report is a JSON object")
    checks = value.get("checks")
    if not isinstance(checks, list) or len(checks) > MAX_CHECKS:
        raise ReportShapeError(f"checks: expected a list of at most {MAX_CHECKS}")
    rows = [_check(c, f"checks[{n}]") for n, c in enumerate(checks)]
    environment = value.get("environment", {})
    if not isinstance(environment, dict):
        raise ReportShapeError("environment: expected an object")
    counts = {status: sum(r["status"] == status for r in rows) for status in STATUSES}
    report = {
        "schema_version": 1,
        "target": checked_text(value.get("target"), "target", 1000),
        "started_at": checked_text(value.get("started_at", ""), "started_at", 64),
        "duration_s": _number(value.get("duration_s", 0.0), "duration_s"),
        "environment": environment,
        "summary": counts,  # counted again: a report cannot claim a pass its checks do not show
        "checks": rows,
    }
    return cast(TargetReport, report)


def entering_report(target: str, value: Any) -> TargetReport:
    """A report as it arrives from TARGET, checked and named for it; an EnvkitError (the target
    and what is wrong) when its shape is not the report's."""
    from envkit.errors import EnvkitError

    if isinstance(value, dict):
        value = {**value, "target": target}
    try:
        return checked_report(value)
    except ReportShapeError as exc:
        raise EnvkitError(
            f"the report from {target} is not envkit's: {exc}",
            "the target ran another checks bundle or altered its output; run verify again",
        ) from None
