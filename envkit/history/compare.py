"""What changed between two runs, and which figures fell below their baseline.

A baseline is the median of the same figure in the target's last passing runs on the same image
and GPU model. A figure regressed when it is worse than that by more than its tolerance: the
larger of a floor and four robust standard deviations of the recorded figures (1.4826 times their
median absolute deviation), capped so that a figure that falls by 40 % is always flagged: a noisy
figure needs a larger move and a steady one a smaller."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

from envkit.history.store import History, Run

BASELINE_RUNS = 5  # the last k passing runs
MIN_RUNS = 3  # fewer than this and there is no spread to learn from: no verdict
TOLERANCE_FLOOR = 0.15  # GPU figures (CUDA events, warmed up) stay within a few % run to run
# Host-CPU throughput (bench.cpu_*) swings with the host's own slow spells, so those checks
# also record their speed relative to interleaved plain-Python work (unit "x"), which is what
# is judged; the absolute figures are kept for trends and `history diff` only.
FLOORS = {"bench.cpu_": 0.30}
INFORMATIONAL = {("bench.cpu_matmul", "cpu_matmul_fp32"), ("bench.cpu_memcpy", "cpu_memcpy")}
TOLERANCE_CAP = 0.40  # however noisy the record, a figure that falls by 40 % is a regression
SPREAD_FACTOR = 4 * 1.4826
# Fingerprint entries compared by `history diff` (the GPU list is compared by model and count).
ENVIRONMENT_KEYS = (
    "torch",
    "cuda_runtime",
    "cudnn",
    "nccl",
    "driver",
    "driver_cuda",
    "python",
    "python_prefix",
    "platform",
    "machine",
    "image_id",
)


def floor_for(check_id: str) -> float:
    """The smallest move of a figure of this check that counts (regression or `moved`)."""
    return next((f for prefix, f in FLOORS.items() if check_id.startswith(prefix)), TOLERANCE_FLOOR)


def better_when_higher(unit: str) -> bool | None:
    """Throughputs (per second) and speed ratios ("x") are better higher, durations lower;
    other units: no verdict."""
    if unit.endswith("/s") or unit == "x":
        return True
    return False if unit in ("s", "ms", "us") else None


@dataclass(frozen=True)
class Regression:
    check_id: str
    name: str
    value: float
    unit: str
    baseline: float
    tolerance: float  # as a fraction of the baseline
    runs: int  # how many runs the baseline is the median of

    @property
    def change(self) -> float:
        return (self.value - self.baseline) / self.baseline

    def describe(self) -> str:
        return (
            f"{self.check_id} {self.name}: {self.value:.4g} {self.unit} against a baseline of "
            f"{self.baseline:.4g} (median of {self.runs} passing runs): {self.change:+.0%}, "
            f"beyond the ±{self.tolerance:.0%} tolerance"
        )


def judge(
    check_id: str, name: str, value: float, unit: str, past: list[float]
) -> Regression | None:
    higher = better_when_higher(unit)
    if higher is None or (check_id, name) in INFORMATIONAL or not past or min(past) <= 0:
        return None
    base = statistics.median(past)
    spread = statistics.median(abs(x - base) for x in past) / base
    tolerance = min(TOLERANCE_CAP, max(floor_for(check_id), SPREAD_FACTOR * spread))
    worse = (base - value) / base if higher else (value - base) / base
    if worse > tolerance:
        return Regression(check_id, name, value, unit, base, tolerance, len(past))
    return None


Figures = dict[tuple[str, str], float]  # (check id, figure name) -> value


def regressions(
    history: History, run_id: int, against: int | Figures | None = None
) -> list[Regression]:
    """Figures of run `run_id` worse than their baseline: the auto baseline (None), one
    recorded run's figures (a run id), or figures from a saved report (a mapping)."""
    run = history.run(run_id)
    if run is None:
        return []
    reference: Figures | None = None
    if isinstance(against, int):
        reference = {key: value for key, (value, _) in history.metrics(against).items()}
    elif against is not None:
        reference = against
    found = []
    for (check_id, name), (value, unit) in sorted(history.metrics(run_id).items()):
        if reference is not None:
            past = [reference[(check_id, name)]] if (check_id, name) in reference else []
        else:
            past = history.figures(run.target, check_id, name, run_id, BASELINE_RUNS)
            if len(past) < MIN_RUNS:
                continue
        if (verdict := judge(check_id, name, value, unit, past)) is not None:
            found.append(verdict)
    return found


@dataclass(frozen=True)
class RunDiff:
    older: Run
    newer: Run
    changed: list[tuple[str, Any, Any]]  # what, before, after
    flipped: list[tuple[str, str, str]]  # check id, before, after
    moved: list[tuple[str, float, float, str]]  # check id + name, before, after, unit
    # Counters (unit "count": XIDs per code, aggregate ECC, remapped rows) that rose, however
    # little: any new XID or correctable ECC error is news about the hardware.
    rose: list[tuple[str, float, float]] = field(default_factory=list)


def diff_runs(history: History, older: Run, newer: Run) -> RunDiff:
    pairs = [(k, older.environment.get(k), newer.environment.get(k)) for k in ENVIRONMENT_KEYS]
    pairs += [
        ("gpu model", older.gpu_model, newer.gpu_model),
        ("gpu count", older.gpu_count, newer.gpu_count),
        ("host", older.host, newer.host),
    ]
    changed = [(what, before, after) for what, before, after in pairs if before != after]
    old_checks, new_checks = history.checks(older.id), history.checks(newer.id)
    flipped = [
        (check, old_checks.get(check, "absent"), new_checks.get(check, "absent"))
        for check in sorted(set(old_checks) | set(new_checks))
        if old_checks.get(check) != new_checks.get(check)
    ]
    old_figures, new_figures = history.metrics(older.id), history.metrics(newer.id)
    moved = []
    for figure in sorted(set(old_figures) & set(new_figures)):
        (before, unit), (after, _) = old_figures[figure], new_figures[figure]
        if unit != "count" and before and abs(after - before) / abs(before) > floor_for(figure[0]):
            moved.append((f"{figure[0]} {figure[1]}", before, after, unit))
    rose = [
        (f"{figure[0]} {figure[1]}", old_figures.get(figure, (0.0, ""))[0], value)
        for figure, (value, unit) in sorted(new_figures.items())
        if unit == "count" and value > old_figures.get(figure, (0.0, ""))[0]
    ]
    return RunDiff(older, newer, changed, flipped, moved, rose)


def last_pass_and_latest(
    history: History, target: str | tuple[str, ...] | None
) -> tuple[Run, Run] | None:
    """The default pair for `history diff`: the latest run and the last passing one before it."""
    runs = history.runs(target, limit=1000)
    if not runs:
        return None
    latest = runs[0]
    earlier = [r for r in runs[1:] if r.target == latest.target]
    passing = next((r for r in earlier if r.state == "passed"), None)
    older = passing or (earlier[0] if earlier else None)
    return (older, latest) if older is not None else None
