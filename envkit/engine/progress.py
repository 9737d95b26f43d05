"""How a build's progress is shown: readable lines, nothing (quiet), or JSON lines for CI."""

from __future__ import annotations

import json
import sys
import time
from typing import TextIO

from envkit.checks.core.text import for_terminal
from envkit.engine.build import BuildProgress, Reporter


def _elapsed(progress: BuildProgress) -> float:
    return time.monotonic() - progress.started


def console_reporter(stream: TextIO | None = None, verbose: bool = False) -> Reporter:
    out = stream or sys.stdout

    def report(event: str, progress: BuildProgress, text: str) -> None:
        if event == "step":
            width = len(str(progress.total))
            shown = text if len(text) <= 110 else text[:107] + "..."
            out.write(
                f"[{progress.step:>{width}}/{progress.total}] {_elapsed(progress):6.1f}s  {shown}\n"
            )
        elif event == "cached":
            out.write(f"{'':>{2 * len(str(progress.total)) + 3}} {'':6}   (cached)\n")
        elif event == "output" and verbose:
            out.write(f"{'':>{2 * len(str(progress.total)) + 12}}| {for_terminal(text)}\n")
        elif event == "done":
            cached = len(progress.cached)
            exported = (
                f" (writing the layers: {progress.export_s:.1f}s)" if progress.export_s else ""
            )
            out.write(
                f"built in {_elapsed(progress):.1f}s: {progress.total} steps, {cached} from "
                f"cache{exported}\n"
            )
        out.flush()

    return report


def quiet_reporter() -> Reporter:
    def report(event: str, progress: BuildProgress, text: str) -> None:
        return None

    return report


def json_reporter(stream: TextIO | None = None) -> Reporter:
    out = stream or sys.stdout

    def report(event: str, progress: BuildProgress, text: str) -> None:
        if event == "output":
            return
        row = {
            "event": event,
            "step": progress.step,
            "total": progress.total,
            "elapsed_s": round(_elapsed(progress), 3),
        }
        if event == "step":
            row["instruction"] = text
        if event == "done":
            row["cached_steps"] = sorted(progress.cached)
            row["image_id"] = progress.image_id
            row["export_s"] = progress.export_s
        out.write(json.dumps(row) + "\n")
        out.flush()

    return report
