"""The worker side of a run (imports torch): it imports the suite's modules it is told to, then runs
the checks it is fed, one at a time, and reports each on its own pipe. The parent (session.py) owns
timeouts and restarts: a check that hangs or kills this process costs only that check."""

from __future__ import annotations

import importlib
import json
import os
import sys
import time
import traceback
from typing import Any, Dict, List

from .contract import CheckResult, Metric, RunnerConfig, Status, check_result
from .location import PACKAGE

# A benchmark's figure on an image of another platform run by QEMU times the emulator (an arm64
# matmul on an x86 machine runs many times slower than on an arm64 node), never the hardware.
EMULATED = (
    "the target runs under emulation (QEMU): a figure would time the emulator, not the hardware; "
    "benchmark on a native node of its platform"
)


def run_one(spec: Any, config: RunnerConfig) -> CheckResult:
    from .context import Context
    from .registry import CheckFailed, Skip

    ctx = Context(config)
    ctx.current = spec.id
    started = time.perf_counter()
    status: Status
    try:
        if config.get("torch") is False and spec.needs_torch:
            raise Skip("envkit.yaml says torch: none: this environment has no torch to check")
        if config.get("emulated") and spec.bench:
            raise Skip(EMULATED)
        message = spec.func(ctx) or ""
        status = "pass"
    except Skip as exc:
        status, message = "skip", str(exc)
    except (CheckFailed, AssertionError) as exc:
        status, message = "fail", str(exc) or "assertion failed"
    except Exception as exc:  # the check itself broke
        status = "error"
        message = f"{type(exc).__name__}: {exc}\n" + "".join(
            traceback.format_tb(exc.__traceback__)[-3:]
        )
    if status == "pass" and (failing := judge_metrics(ctx.metrics)):
        status, message = "fail", failing
    duration = round(time.perf_counter() - started, 4)
    return check_result(spec.id, status, duration, str(message), ctx.metrics)


def judge_metrics(metrics: List[Metric]) -> str:
    """Why figures a passing check recorded break their bounds; empty when none does."""
    found = []
    for m in metrics:
        fraction, threshold = m["fraction_of_peak"], m["threshold"]
        if threshold is not None and fraction is not None and fraction < threshold:
            found.append(
                f"{m['name']} at {fraction:.1%} of peak, below the threshold {threshold:.0%}"
            )
        low, high = m.get("minimum"), m.get("maximum")
        if low is not None and m["value"] < low:
            found.append(f"{m['name']} is {m['value']:g} {m['unit']}, below the minimum {low:g}")
        if high is not None and m["value"] > high:
            found.append(f"{m['name']} is {m['value']:g} {m['unit']}, above the maximum {high:g}")
    return "; ".join(found)


def worker_main(event_fd: int) -> None:
    request = json.loads(sys.stdin.readline())
    for module in request["modules"]:  # registering: each module's @check decorators run
        importlib.import_module(f"{PACKAGE}.{module}")
    from .fingerprint import fingerprint
    from .registry import CHECKS

    events = os.fdopen(event_fd, "w", buffering=1)
    config = request["config"]

    def emit(event: Dict[str, Any]) -> None:
        events.write(json.dumps(event) + "\n")
        events.flush()

    if request.get("fingerprint"):
        emit({"event": "env", "environment": fingerprint()})
    for check_id in request["ids"]:
        emit({"event": "start", "id": check_id})
        emit({"event": "result", "result": run_one(CHECKS[check_id], config)})
    emit({"event": "done"})
