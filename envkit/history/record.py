"""What `envkit verify` does with history: record each target's run, then, when asked, judge
its figures against their baselines. History is a help, never a gate on verification itself:
an unusable history file is a warning and the run's own verdict stands."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envkit.errors import EnvkitError
from envkit.history.compare import Figures, Regression, diff_runs, regressions
from envkit.history.store import History, HistoryError, Run, default_path

TREND_RUNS = 20  # the HTML report's trend charts show this many recent runs


Baseline = int | str | dict[str, Figures] | None  # run id | "auto" | a report's figures


def parse_baseline(value: str | None) -> Baseline:
    """None, "auto", a run id, or a saved JSON report (`verify --json`): its figures per
    target. Checked before the suite runs, so a typo costs nothing."""
    if value is None or value == "auto":
        return value
    if value.isdigit():
        return int(value)
    path = Path(value)
    if path.is_file():
        return _report_figures(path)
    raise EnvkitError(
        f"--baseline {value!r} is neither auto, a run id, nor a report file",
        "pass --baseline auto, a run id from `envkit history`, or a `verify --json` file",
    )


def _report_figures(path: Path) -> dict[str, Figures]:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        return {
            str(report["target"]): {
                (str(check["id"]), str(m["name"])): float(m["value"])
                for check in report["checks"]
                for m in check["metrics"]
            }
            for report in document.get("targets", [document])
        }
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise EnvkitError(
            f"--baseline {path} is not a verify report ({type(exc).__name__})",
            "pass a file written by `envkit verify --json`",
        ) from None


@dataclass
class Remembered:
    run_ids: dict[str, int] = field(default_factory=dict)  # target -> run id
    regressions: dict[str, list[Regression]] = field(default_factory=dict)
    warning: str | None = None
    # For the HTML report: per target, what changed since its last passing run, and per
    # "target check figure (unit)", the figure over recent runs as (run id, value).
    changes: dict[str, list[str]] = field(default_factory=dict)
    trends: dict[str, list[tuple[int, float]]] = field(default_factory=dict)

    def as_json(self) -> list[dict[str, Any]]:
        return [
            {
                "target": target,
                "check": r.check_id,
                "figure": r.name,
                "value": r.value,
                "unit": r.unit,
                "baseline": r.baseline,
                "change": r.change,
                "tolerance": r.tolerance,
            }
            for target, found in self.regressions.items()
            for r in found
        ]


def _against(baseline: Baseline, target: str) -> int | Figures | None:
    if isinstance(baseline, dict):  # a saved report: the same target's figures, or its only one
        if target in baseline:
            return baseline[target]
        return next(iter(baseline.values())) if len(baseline) == 1 else {}
    return baseline if isinstance(baseline, int) else None


def remember(
    reports: list[Any], run_uid: str, path: Path | None, baseline: Baseline, summarise: bool = False
) -> Remembered:
    """Record each report; judge it when a baseline is given; with `summarise`, also gather
    what the HTML report shows (changes since the last pass, trends), which costs reads."""
    result = Remembered()
    try:
        history = History(path or default_path())
    except HistoryError as exc:
        result.warning = f"{exc.message}; this run was not recorded ({exc.fix})"
        return result
    try:
        _remember(history, reports, run_uid, baseline, summarise, result)
    except Exception as exc:  # history is only a help: nothing of it decides the verdict
        # A file damaged in ways opening it does not show (corrupt pages, a missing table, a
        # row edited by hand): the run's own verdict and report files stand.
        result = Remembered(
            run_ids=result.run_ids,
            warning=f"history file {history.path} could not be used "
            f"({type(exc).__name__}: {exc}); the run's verdict stands",
        )
    finally:
        history.close()
    if history.skipped and result.warning is None:
        result.warning = f"history file {history.path}: {history.read_around()}"
    return result


def _remember(
    history: History,
    reports: list[Any],
    run_uid: str,
    baseline: Baseline,
    summarise: bool,
    result: Remembered,
) -> None:
    for index, report in enumerate(reports):
        run_id = history.record(report, f"{run_uid}-{index}")
        result.run_ids[report["target"]] = run_id
        if baseline is not None:
            found = regressions(history, run_id, _against(baseline, report["target"]))
            if found:
                result.regressions[report["target"]] = found
        if summarise:
            _summarise(history, run_id, result)


def _summarise(history: History, run_id: int, result: Remembered) -> None:
    latest = history.run(run_id)
    if latest is None:
        return
    earlier = [r for r in history.runs(latest.target, TREND_RUNS) if r.id != run_id]
    result.changes[latest.target] = _changes(history, latest, earlier)
    for run in reversed([latest, *earlier]):
        for (check_id, name), (value, unit) in sorted(history.metrics(run.id).items()):
            key = f"{run.target} {check_id} {name} ({unit})"
            result.trends.setdefault(key, []).append((run.id, value))


def _changes(history: History, latest: Run, earlier: list[Run]) -> list[str]:
    passed = next((r for r in earlier if r.state == "passed"), None)
    if passed is None:
        return ["no earlier passing run of this target in history"]
    found = diff_runs(history, passed, latest)
    lines = [f"since run {passed.id} ({passed.started_at}), the last that passed:"]
    lines += [f"{what}: {before} -> {after}" for what, before, after in found.changed]
    lines += [f"{check}: {before} -> {after}" for check, before, after in found.flipped]
    lines += [f"{what}: {b:.4g} -> {a:.4g} {unit}" for what, b, a, unit in found.moved]
    lines += [f"{what} rose: {b:g} -> {a:g}" for what, b, a in found.rose]
    return lines if len(lines) > 1 else [*lines, "nothing changed beyond the noise"]
