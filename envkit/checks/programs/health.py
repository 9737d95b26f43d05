"""Node health mode, fit for Slurm's HealthCheckProgram or a prolog: a fast subset of the suite
under a watchdog (Slurm kills the program after 60 s), exit 0 when healthy, otherwise exit 1
with one line saying why, and optionally the node drained with that line as the reason; a
drained node is resumed only after a clean burn-in (`in_service`).

    python bundle.zip health [--config JSON] [--timeout 50] [--drain] [--node NAME] [--python P]
    python bundle.zip health --npd ...     node-problem-detector's custom plugin: exit 0 healthy,
                                           1 a problem, 2 unknown; one line of <= 80 bytes

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
from typing import Any, Dict, List, Optional, Tuple

from ..core.node_state import NodeState, now

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
HEALTHY, UNHEALTHY, UNKNOWN = "healthy", "unhealthy", "unknown"
BURN_IN = "envkit verify --stress 10m"  # what returns a drained node: suite/stress.py
# Every other check passed but no GPU was read: Unknown for node-problem-detector (a GPU
# condition cannot be OK unread), healthy for Slurm (a CPU node is judged by its other checks).
NO_GPU = "no gpu"
# node-problem-detector's custom-plugin protocol: the exit code is the condition's state, and the
# first NPD_MESSAGE_BYTES bytes of stdout its message.
NPD_EXIT = {HEALTHY: 0, UNHEALTHY: 1, UNKNOWN: 2, NO_GPU: 2}
NPD_MESSAGE_BYTES = 80


def _child_argv(python: str, config: Dict[str, Any], out: str) -> List[str]:
    """The suite from the same place this code runs from: the bundle, or the package folder."""
    from ..core.location import ROOT, python_code

    program = [ROOT] if ROOT.endswith(".zip") else ["-c", python_code("main.main()")]
    return [python, *program, "run", "--config", json.dumps(config), "--out", out]


def _first_line(text: str) -> str:
    return (text.strip().splitlines() or [""])[0]


def reason_for(report: Dict[str, Any]) -> Optional[str]:
    """None when healthy; else one line naming the first check that failed and why."""
    bad = [c for c in report.get("checks", []) if c.get("status") in ("fail", "error")]
    # A lost or missing GPU fails every check that reads it; the root cause leads, not the
    # first counter it took with it (gpu.inventory judges the whole run, so it reports late).
    bad.sort(key=lambda c: c.get("id") != "gpu.inventory")
    if not bad:
        return None
    first = bad[0]
    more = f" (+{len(bad) - 1} more)" if len(bad) > 1 else ""
    return f"envkit: {first['id']}: {_first_line(str(first.get('message', '')))}{more}"


def _gpus_read(report: Dict[str, Any]) -> Tuple[str, str]:
    """A report with no failure: NO_GPU where no GPU was read (node-problem-detector's Unknown;
    never healthy: a value that could not be read is not a pass), else HEALTHY and how many."""
    checks = report.get("checks", [])
    inventory: Dict[str, Any] = next((c for c in checks if c.get("id") == "gpu.inventory"), {})
    if inventory.get("status") != "pass":
        why = _first_line(str(inventory.get("message") or "gpu.inventory did not run"))
        return NO_GPU, f"envkit: no GPU read: {why}"
    found = [m["value"] for m in inventory.get("metrics", []) if m.get("name") == "gpu_count"]
    return HEALTHY, f"envkit: {int(found[0]) if found else 'every'} GPU(s) healthy"


def judge_health(python: str, config: Dict[str, Any], timeout: float) -> Tuple[str, str]:
    """Run the subset under the watchdog: (HEALTHY, UNHEALTHY, UNKNOWN or NO_GPU, one line
    saying why). UNKNOWN where nothing could be judged: the watchdog ran out, the checks could
    not start."""
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
            return UNKNOWN, f"envkit: health checks did not finish within {timeout:.0f} s"
        if not os.path.exists(out):
            tail = (stderr.decode(errors="replace").strip().splitlines() or [""])[-1]
            said = f": {tail}" if tail else ""
            return UNKNOWN, f"envkit: the checks could not start with {python}{said}"
        with open(out) as handle:
            report = json.load(handle)
    reason = reason_for(report)
    return (UNHEALTHY, reason) if reason is not None else _gpus_read(report)


def npd_message(line: str) -> str:
    """One line of at most NPD_MESSAGE_BYTES bytes of UTF-8 (node-problem-detector cuts a
    plugin's message there; cutting it here keeps a character whole)."""
    data = line.replace("\n", " ").encode("utf-8")[:NPD_MESSAGE_BYTES]
    return data.decode("utf-8", errors="ignore")


def node_name(given: Optional[str]) -> str:
    return given or os.environ.get("SLURMD_NODENAME") or socket.gethostname().split(".")[0]


def _slurm(*argv: str) -> Tuple[bool, str]:
    """A Slurm command: (whether it answered, its first line or why it did not)."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"{argv[0]}: {exc}"
    if done.returncode != 0:
        return False, _first_line(done.stderr or done.stdout)
    return True, _first_line(done.stdout)


def drain(node: str, reason: str) -> Optional[str]:
    """Drain the node with the reason; an error line when scontrol refused."""
    done, said = _slurm("scontrol", "update", f"nodename={node}", "state=drain", f"reason={reason}")
    return None if done else f"could not drain {node}: {said}"


def resume(node: str) -> Optional[str]:
    """Resume the node where Slurm holds it for envkit's reason (a drain for another reason is
    an administrator's, and stays); an error line when it could not."""
    done, reason = _slurm("sinfo", "-h", "-N", "-n", node, "-o", "%E")
    if done and not reason.startswith("envkit:"):
        return None
    if done:
        done, reason = _slurm("scontrol", "update", f"nodename={node}", "state=resume")
    return None if done else f"could not resume {node}: {reason}"


def _said(*notes: Optional[str]) -> None:
    """Notes on stderr: stdout is the one line Slurm reads."""
    for note in notes:
        if note:
            sys.stderr.write(note + "\n")


def _reason(line: str) -> str:
    return line.replace('"', "'")[:REASON_LIMIT]


def in_service(verdict: str, line: str, node: Optional[str]) -> Tuple[str, str]:
    """A failure with NODE (--drain) drains the node and records when and why. It returns only
    after a clean burn-in (its run records it: suite/topology.py), as a quick check shows GPUs
    that idle well, not GPUs that hold under load: until then each run says why it is out; the
    first passing run with NODE after it resumes the node and records when and after which."""
    state = NodeState()
    service = state.service
    if verdict in (UNHEALTHY, UNKNOWN) and node is not None:
        if service.get("out"):
            service.pop("burn_in", None)  # a failure after the burn-in: it proved nothing
        else:
            state.data["service"] = {"out": True, "drained_at": now(), "reason": line}
        _said(drain(node, _reason(line)), state.save())
    if verdict in (UNHEALTHY, UNKNOWN) or not service.get("out"):
        return verdict, line
    burn_in = service.get("burn_in")
    if not burn_in:
        held = f"envkit: out since {service.get('drained_at')} until a burn-in passes ({BURN_IN}): "
        held += str(service.get("reason", "")).replace("envkit: ", "", 1)
        _said(drain(node, _reason(held)) if node else None)
        return UNHEALTHY, held
    if node is not None:
        if unresumed := resume(node):
            return UNHEALTHY, f"envkit: {unresumed}"
        service.update(out=False, returned_at=now(), returned_after=burn_in.get("run"))
        _said(
            state.save(),
            f"envkit: {node} back in service after the burn-in of {burn_in.get('run')}",
        )
    return verdict, line


def main(
    config: Dict[str, Any],
    timeout: float,
    drain_node: bool,
    node: Optional[str],
    python: str,
    reset_baseline: bool = False,
    npd: bool = False,
) -> int:
    started = time.monotonic()
    if reset_baseline:
        from ..suite.topology import forget

        unwritten = forget()
        _said(unwritten or "envkit: the topology baseline is reset")
        if unwritten:
            sys.stdout.write(f"envkit: {unwritten}\n")
            return 1
    judged = judge_health(python, config, timeout)
    verdict, line = in_service(*judged, node_name(node) if drain_node else None)
    if npd:
        sys.stdout.write(npd_message(line) + "\n")
        return NPD_EXIT[verdict]
    if verdict in (UNHEALTHY, UNKNOWN):  # a run that could not finish is a reason too
        sys.stdout.write(_reason(line) + "\n")
        return 1
    # A node without GPUs is healthy to Slurm: it is judged by its other checks.
    sys.stdout.write(f"envkit: healthy ({time.monotonic() - started:.1f} s)\n")
    return 0
