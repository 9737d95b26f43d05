"""Check registration and the outcomes a check can raise."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Sequence

from .contract import Phase, RunnerConfig

CHECK_ID = re.compile(r"[a-z][a-z0-9]*\.[a-z][a-z0-9_]*")


class Skip(Exception):
    """The check does not apply here; the reason is shown."""


class CheckFailed(AssertionError):
    """The environment is broken in the way this check looks for."""


def ensure(condition: object, message: str) -> None:
    if not condition:
        raise CheckFailed(message)


@dataclass(frozen=True)
class CheckSpec:
    id: str
    func: Callable[..., object]
    timeout_s: float
    bench: bool
    reference: str  # what the result is compared with; never the op under test itself
    # "after": judged once every other check has run, from what was observed meanwhile (XID
    # events, clocks under load, counters that rose); "run": in its turn.
    phase: Phase = "run"
    # A burn-in: runs only when the run asks for one (verify --stress), for the seconds asked
    # beyond its own timeout.
    stress: bool = False
    # False: judged without torch (NVML, the system's own state), so it runs for a project with
    # torch: none; every other check skips there, saying why.
    needs_torch: bool = True

    def timeout_for(self, config: RunnerConfig) -> float:
        return self.timeout_s + (float(config.get("stress_s") or 0) if self.stress else 0.0)

    @property
    def group(self) -> str:
        return self.id.split(".", 1)[0]

    @property
    def doc(self) -> str:
        return (self.func.__doc__ or "").strip()


CHECKS: dict[str, CheckSpec] = {}


def check(
    check_id: str,
    *,
    reference: str,
    timeout_s: float = 60.0,
    bench: bool = False,
    phase: Phase = "run",
    stress: bool = False,
    needs_torch: bool = True,
) -> Callable[[Callable[..., object]], Callable[..., object]]:
    """Register a check. `reference` says what its result is compared with (docs/checks.md
    shows it): known answers, exact arithmetic, plain Python, a published figure, never the
    op under test."""
    if not CHECK_ID.fullmatch(check_id):
        raise ValueError(f"check id {check_id} is not GROUP.NAME (lowercase, dotted)")
    if not reference.strip():
        raise ValueError(f"check {check_id} needs a reference")

    def register(func: Callable[..., object]) -> Callable[..., object]:
        if check_id in CHECKS:
            raise ValueError(f"check id {check_id} registered twice")
        CHECKS[check_id] = CheckSpec(
            check_id, func, timeout_s, bench, reference, phase, stress, needs_torch
        )
        return func

    return register


def select(
    only: Sequence[str],
    skip: Sequence[str],
    bench: bool,
    groups: Sequence[str],
    stress: bool = False,
) -> list[CheckSpec]:
    """Checks by id or group prefix, in the order of `groups` (registration order within one);
    bench checks only with bench=True or when named; stress checks only with stress=True."""

    def named(spec: CheckSpec, patterns: Sequence[str]) -> bool:
        return any(spec.id == p or spec.group == p or spec.id.startswith(p + ".") for p in patterns)

    chosen = []
    for spec in CHECKS.values():
        if only and not named(spec, only):
            continue
        if named(spec, skip):
            continue
        if spec.bench and not bench and not (only and named(spec, only)):
            continue
        if spec.stress and not stress:
            continue
        chosen.append(spec)
    if unknown := sorted({spec.group for spec in chosen} - set(groups)):
        raise ValueError(f"checks registered in groups the suite does not list: {unknown}")
    return sorted(chosen, key=lambda spec: list(groups).index(spec.group))
