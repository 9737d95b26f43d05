"""How a build's progress is shown, the same on BuildKit and the classic builder:

- tty: each step on one line, its duration (or "cached") added when it ends;
- plain: a line when a step begins and one when it ends (logs and CI, no cursor tricks);
- json: one object per event (step, step_done with its duration, done with every step);
- quiet: nothing but what the command prints itself.

Every mode but quiet ends with a summary: the total, how many steps came from the cache, the
slowest steps and what writing the layers took."""

from __future__ import annotations

import json
import sys
import time
from typing import TextIO

from envkit.checks.core.text import for_terminal
from envkit.engine.build import BuildProgress, Reporter, slowest

SHOWN = 100  # an instruction's characters in a progress line


def _elapsed(progress: BuildProgress) -> float:
    return time.monotonic() - progress.started


def _label(progress: BuildProgress, step: int) -> str:
    return f"[{step:>{len(str(progress.total))}}/{progress.total}]"


def _short(text: str) -> str:
    return text if len(text) <= SHOWN else text[: SHOWN - 1] + "…"


def _taken(progress: BuildProgress, step: int) -> str:
    return "cached" if step in progress.cached else f"{progress.durations.get(step, 0.0):.1f}s"


def summary(progress: BuildProgress) -> str:
    """One paragraph: where the build's time went."""
    cached = len(progress.cached)
    ran = len(progress.durations) - len(progress.cached & set(progress.durations))
    text = (
        f"built in {_elapsed(progress):.1f}s: {progress.total} steps, {ran} run, "
        f"{cached} from cache"
    )
    if progress.export_s:
        text += f", writing the layers {progress.export_s:.1f}s"
    if slow := slowest(progress):
        text += "\nslowest: " + "; ".join(
            f"{_label(progress, step)} {seconds:.1f}s {_short(instruction)[:60]}"
            for step, seconds, instruction in slow
        )
    return text + "\n"


def console_reporter(
    stream: TextIO | None = None, verbose: bool = False, tty: bool = False
) -> Reporter:
    """Lines for people. tty: a step's line is finished with its duration when it ends (a log
    line in between, with --verbose, breaks it first); plain: a line at each end too."""
    out = stream or sys.stdout
    open_line = {"step": 0}  # the step whose line waits for its duration (tty)

    def close(progress: BuildProgress) -> None:
        if open_line["step"]:
            out.write("\n")
            open_line["step"] = 0

    def report(event: str, progress: BuildProgress, text: str) -> None:
        if event == "step":
            close(progress)
            line = f"{_label(progress, progress.step)} {_short(for_terminal(text))}"
            out.write(line if tty else line + "\n")
            open_line["step"] = progress.step if tty else 0
        elif event == "output" and verbose:
            close(progress)
            out.write(f"{'':>{2 * len(str(progress.total)) + 3}} | {for_terminal(text)}\n")
        elif event == "ended":
            if tty and open_line["step"] == progress.step:
                out.write(f"  {_taken(progress, progress.step)}\n")
                open_line["step"] = 0
            else:
                close(progress)
                out.write(f"{_label(progress, progress.step)} {_taken(progress, progress.step)}\n")
        elif event == "done":
            close(progress)
            out.write(summary(progress))
        out.flush()

    return report


def quiet_reporter() -> Reporter:
    return lambda event, progress, text: None


def json_reporter(stream: TextIO | None = None) -> Reporter:
    out = stream or sys.stdout

    def report(event: str, progress: BuildProgress, text: str) -> None:
        if event in ("output", "cached"):
            return
        row: dict[str, object] = {
            "event": "step_done" if event == "ended" else event,
            "step": progress.step,
            "total": progress.total,
            "elapsed_s": round(_elapsed(progress), 3),
        }
        if event == "step":
            row["instruction"] = text
        if event == "ended":
            row["duration_s"] = round(progress.durations.get(progress.step, 0.0), 3)
            row["cached"] = progress.step in progress.cached
        if event == "done":
            row["cached_steps"] = sorted(progress.cached)
            row["image_id"] = progress.image_id
            row["export_s"] = progress.export_s
            row["steps"] = [
                {
                    "step": step,
                    "instruction": progress.instructions.get(step, ""),
                    "duration_s": round(seconds, 3),
                    "cached": step in progress.cached,
                }
                for step, seconds in sorted(progress.durations.items())
            ]
        out.write(json.dumps(row) + "\n")
        out.flush()

    return report
