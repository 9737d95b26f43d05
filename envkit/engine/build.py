"""What a build reports, on either backend: progress step by step, and on failure the failing
Dockerfile step, the last lines of its log, and a hint where the failure is a known one (an
unreachable mirror, a missing package). The backends (classic.py: the docker SDK's builder;
buildkit.py: `docker buildx build`; builders.py picks one) turn their output into these events."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NoReturn

from envkit.engine.build_causes import cause
from envkit.errors import BuildFailedError


@dataclass
class BuildProgress:
    """What the build stream said, step by step: each step's instruction and, once it ended,
    how long it took (BuildKit's own figure where it gives one, else the time between its start
    and the next step's)."""

    total: int = 0
    step: int = 0
    instruction: str = ""
    cached: set[int] = field(default_factory=set)
    started: float = field(default_factory=lambda: time.monotonic())
    log: deque[str] = field(default_factory=lambda: deque(maxlen=40))
    image_id: str | None = None
    export_s: float | None = None  # BuildKit: writing the layers into the engine's image store
    instructions: dict[int, str] = field(default_factory=dict)
    durations: dict[int, float] = field(default_factory=dict)  # step -> seconds, once ended
    measured: dict[int, float] = field(default_factory=dict)  # step -> the builder's own figure
    step_started: float = 0.0


# (event, progress, text). Events: "step" (one begins), "cached", "output" (a log line),
# "ended" (the step in progress.step took progress.durations[step]), "done".
Reporter = Callable[[str, BuildProgress, str], None]


def begin_step(progress: BuildProgress, index: int, instruction: str, report: Reporter) -> None:
    """Step INDEX begins: the one before it has ended."""
    end_step(progress, report)
    progress.step, progress.instruction = index, instruction
    progress.instructions[index] = instruction
    progress.step_started = time.monotonic()
    progress.log.clear()
    report("step", progress, instruction)


def end_step(progress: BuildProgress, report: Reporter) -> None:
    """The step in progress ends (once): its duration recorded and reported."""
    index = progress.step
    if not index or index in progress.durations:
        return
    taken = progress.measured.get(index, time.monotonic() - progress.step_started)
    progress.durations[index] = 0.0 if index in progress.cached else max(taken, 0.0)
    report("ended", progress, "")


def finish(progress: BuildProgress, report: Reporter) -> None:
    end_step(progress, report)
    report("done", progress, "")


def slowest(progress: BuildProgress, count: int = 3) -> list[tuple[int, float, str]]:
    """The steps that took longest: (step, seconds, instruction)."""
    ran = [(i, s) for i, s in progress.durations.items() if i not in progress.cached]
    ran.sort(key=lambda item: item[1], reverse=True)
    return [(i, s, progress.instructions.get(i, "")) for i, s in ran[:count]]


def fail(progress: BuildProgress, error: str) -> NoReturn:
    """Raise BuildFailedError naming the step, its last log lines and a hint."""
    lines = list(progress.log)[-15:]
    # The cause may be above the last lines (uv prints its resolution before the summary).
    where = (
        f"at step {progress.step}/{progress.total}: {progress.instruction}"
        if progress.step
        else "before its first step"
    )
    hint = cause([*progress.log, error])
    message = f"the build failed {where}\n  {error.strip()}"
    if lines:
        message += "\n  last lines of its log:\n" + "\n".join(f"    | {ln}" for ln in lines)
    raise BuildFailedError(
        message, hint or "fix the step above in envkit.yaml, then `envkit build`"
    )


@dataclass(frozen=True)
class BuildOptions:
    """What one build asks of either backend."""

    tag: str
    no_cache: bool = False
    build_args: dict[str, str] = field(default_factory=dict)
    network: str | None = None  # "host", or the engine's default
    labels: dict[str, str] = field(default_factory=dict)
    cache_from: tuple[str, ...] = ()  # images whose layers may stand in for steps (a registry's)
    secrets: dict[str, str] = field(default_factory=dict)  # BuildKit secret id -> file on the host
    platform: str | None = None  # linux/arm64: build for it (under QEMU where not native)
