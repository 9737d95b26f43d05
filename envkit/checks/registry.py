"""Check registration and the outcomes a check can raise."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

GROUPS = ("cuda", "tensor", "autograd", "multigpu", "system", "bench")


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

    @property
    def group(self) -> str:
        return self.id.split(".", 1)[0]

    @property
    def doc(self) -> str:
        return (self.func.__doc__ or "").strip()


CHECKS: dict[str, CheckSpec] = {}


def check(
    check_id: str, *, reference: str, timeout_s: float = 60.0, bench: bool = False
) -> Callable[[Callable[..., object]], Callable[..., object]]:
    """Register a check. `reference` says what its result is compared with (docs/checks.md
    shows it): known answers, exact arithmetic, plain Python, a published figure, never the
    op under test."""
    group = check_id.split(".", 1)[0]
    if group not in GROUPS:
        raise ValueError(f"check id {check_id} is outside the groups {GROUPS}")
    if not reference.strip():
        raise ValueError(f"check {check_id} needs a reference")

    def register(func: Callable[..., object]) -> Callable[..., object]:
        if check_id in CHECKS:
            raise ValueError(f"check id {check_id} registered twice")
        CHECKS[check_id] = CheckSpec(check_id, func, timeout_s, bench, reference)
        return func

    return register


def select(only: list[str], skip: list[str], bench: bool) -> list[CheckSpec]:
    """Checks by id or group prefix; bench checks only with bench=True or when named."""

    def named(spec: CheckSpec, patterns: list[str]) -> bool:
        return any(spec.id == p or spec.group == p or spec.id.startswith(p + ".") for p in patterns)

    chosen = []
    for spec in CHECKS.values():
        if only and not named(spec, only):
            continue
        if named(spec, skip):
            continue
        if spec.bench and not bench and not (only and named(spec, only)):
            continue
        chosen.append(spec)
    return sorted(chosen, key=lambda spec: GROUPS.index(spec.group))  # stable within a group
