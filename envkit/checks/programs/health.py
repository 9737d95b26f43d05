"""Node health mode, fit for Slurm's HealthCheckProgram or a prolog: a fast subset of the suite
under a watchdog (Slurm kills the program after 60 s), exit 0 when healthy, otherwise exit 1
with one line saying why, and optionally the node drained with that line as the reason.

    python bundle.zip health [--config JSON] [--timeout 50] [--drain] [--node NAME] [--python P]

(main.py parses those options and calls `main` here.)

Standard library only on this side; the checks run in a child process with torch."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from typing import Any, Dict, List, Optional

# Quick and telling: the GPU hardware's own state (memory errors, XIDs, links, fabric,
# temperatures), a GPU that vanished, a driver older than the runtime, wrong math, a tiny
# /dev/shm, DataLoader workers that die. No benchmarks, no collectives, no burn-in (they belong
# to jobs), and not gpu.processes: a health program runs while jobs hold the GPUs.
HEALTH_CHECKS = (
    "gpu.inventory",
    "gpu.ecc",
    "gpu.row_remap",
    "gpu.retired_pages",
    "gpu.recovery",
    "gpu.inforom",
    "gpu.fabric",
    "gpu.xid",
    "gpu.clocks",
    "gpu.pcie",
    "gpu.nvlink",
    "gpu.thermal",
    "cuda.available",
    "cuda.device_count",
    "cuda.driver_runtime",
    "tensor.creation",
    "tensor.matmul_dtypes",
    "tensor.device_roundtrip",
    "autograd.seed_examples",
    "system.shm",
    "system.dataloader_workers",
)
DEFAULT_TIMEOUT_S = 50.0
REASON_LIMIT = 200  # Slurm shows the reason in one sinfo -R column


def _child_argv(python: str, config: Dict[str, Any], out: str) -> List[str]:
    """The suite from the same place this code runs from: the bundle, or the package folder."""
    from ..core.location import ROOT, python_code

    args = ["run", "--config", json.dumps(config), "--out", out]
    if ROOT.endswith(".zip"):
        return [python, ROOT, *args]
    return [python, "-c", python_code("main.main()"), *args]


def _first_line(text: str) -> str:
    return (text.strip().splitlines() or [""])[0]


def reason_for(report: Dict[str, Any]) -> Optional[str]:
    """None when healthy; else one line naming the first check that failed and why."""
    bad = [c for c in report.get("checks", []) if c.get("status") in ("fail", "error")]
    if not bad:
        return None
    first = bad[0]
    more = f" (+{len(bad) - 1} more)" if len(bad) > 1 else ""
    return f"envkit: {first['id']}: {_first_line(str(first.get('message', '')))}{more}"


def run_health(python: str, config: Dict[str, Any], timeout: float) -> Optional[str]:
    """Run the subset under the watchdog; the one-line reason, or None when healthy."""
    settings = dict(config, only=list(config.get("only") or HEALTH_CHECKS), bench=False)
    with tempfile.TemporaryDirectory(prefix="envkit-health-") as folder:
        out = os.path.join(folder, "report.json")
        child = subprocess.Popen(
            _child_argv(python, settings, out),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,  # the watchdog ends the checks' workers too
        )
        try:
            _, stderr = child.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
            return f"envkit: health checks did not finish within {timeout:.0f} s"
        if not os.path.exists(out):
            lines = stderr.decode(errors="replace").strip().splitlines()
            tail = lines[-1] if lines else ""
            return f"envkit: the checks could not start with {python}" + (
                f": {tail}" if tail else ""
            )
        with open(out) as handle:
            return reason_for(json.load(handle))


def node_name(given: Optional[str]) -> str:
    return given or os.environ.get("SLURMD_NODENAME") or socket.gethostname().split(".")[0]


def drain(node: str, reason: str) -> Optional[str]:
    """Drain the node with the reason; an error line when scontrol refused."""
    argv = ["scontrol", "update", f"nodename={node}", "state=drain", f"reason={reason}"]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"could not drain {node}: {exc}"
    if done.returncode != 0:
        return f"could not drain {node}: {_first_line(done.stderr or done.stdout)}"
    return None


def main(
    config: Dict[str, Any],
    timeout: float,
    drain_node: bool,
    node: Optional[str],
    python: str,
    reset_baseline: bool = False,
) -> int:
    started = time.monotonic()
    if reset_baseline:
        from ..suite.topology import forget

        unwritten = forget()  # said on stderr: stdout is the one line Slurm reads
        sys.stderr.write(unwritten or "envkit: the topology baseline is reset")
        sys.stderr.write("\n")
        if unwritten:
            sys.stdout.write(f"envkit: {unwritten}\n")
            return 1
    reason = run_health(python, config, timeout)
    if reason is None:
        sys.stdout.write(f"envkit: healthy ({time.monotonic() - started:.1f} s)\n")
        return 0
    reason = reason.replace('"', "'")[:REASON_LIMIT]
    sys.stdout.write(reason + "\n")
    if drain_node:
        failed = drain(node_name(node), reason)
        if failed:
            sys.stderr.write(failed + "\n")
    return 1
