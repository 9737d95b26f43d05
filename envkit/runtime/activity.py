#!/usr/bin/env python3
"""The container's activity watch, started by the entrypoint (installed as envkit-activity).

  envkit-activity watch PID   (the entrypoint, as root) look every few seconds for SSH
                              sessions, busy notebook kernels and GPU work; keep the last time
                              any was seen in the state file; with ENVKIT_IDLE_STOP=SECONDS,
                              end PID (sshd) once idle that long: the container exits 0 and
                              restart: on-failure leaves it stopped, home and host keys kept
  envkit-activity peek        (envkit status) what it sees now, as one JSON object

Why inside the container: it sees its own processes whatever the engine (local, remote,
Podman), needs no host timer and no engine socket, and a stop is the container's own exit.
Standard library only, Python 3.6 syntax: it runs in any image with a python3. Shipped into the
build context as it is; where it looks (the state file, the notebook's token and port) is data
beside it, activity.json, which render writes from the plan's constants.

May import: nothing of envkit; the standard library only, since it runs inside the image."""

import ctypes
import json
import os
import re
import signal
import sys
import time
import urllib.request
from typing import Any, Dict, List, Optional, Tuple

# Where activity.json is: installed beside the other envkit files, or beside this file (the
# rendered build context, where tests run it).
SETTINGS = ("/etc/envkit/activity.json", os.path.join(os.path.dirname(__file__), "activity.json"))


def _settings() -> Dict[str, Any]:
    for path in SETTINGS:
        try:
            with open(path) as handle:
                data = json.load(handle)
        except (OSError, ValueError):
            continue
        if isinstance(data, dict):
            return data
    sys.stderr.write("envkit-activity: no activity.json (%s)\n" % " or ".join(SETTINGS))
    sys.exit(64)


# sshd titles each session's process "sshd: USER@pts/N" (or "@notty"; "sshd-session:" from
# OpenSSH 9.8); the listener and the "[priv]" halves carry no "@".
SESSION = re.compile(r"^sshd(-session)?: [^ @]+@")
KERNEL = re.compile(r"ipykernel")  # ipykernel_launcher, python -m ipykernel
TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
START_GRACE_S = 30
BUSY_CPU_SHARE = 0.2  # a kernel using a fifth of a core between looks is computing


Processes = Dict[int, Tuple[str, int]]


class Where(object):
    """Where the watch reads and writes: from activity.json."""

    def __init__(self, settings: Dict[str, Any]) -> None:
        self.state = str(settings["state_file"])
        self.token_file = str(settings["token_file"])
        self.notebook_port = int(settings["notebook_port"])


def processes() -> Processes:
    """{pid: (command line, CPU ticks used)} of every process in the container."""
    found = {}  # type: Processes
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % name, "rb") as handle:
                command = handle.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
            with open("/proc/%s/stat" % name) as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
            found[int(name)] = (command, int(fields[11]) + int(fields[12]))
        except (OSError, IndexError, ValueError):
            continue  # it ended while we looked
    return found


def jupyter_kernels(where: Where) -> Optional[List[Tuple[Any, bool]]]:
    """Jupyter's own word on its kernels: [(id, busy)], or None where it cannot be asked."""
    try:
        with open(where.token_file) as handle:
            token = handle.read().strip()
        request = urllib.request.Request(
            "http://127.0.0.1:%d/api/kernels" % where.notebook_port,
            headers={"Authorization": "token " + token},
        )
        with urllib.request.urlopen(request, timeout=2) as answer:
            kernels = json.loads(answer.read().decode("utf-8"))
        return [(k.get("id"), k.get("execution_state") == "busy") for k in kernels]
    except Exception:  # no notebook, not started yet, or another server
        return None


class Nvml(object):
    """The GPUs this container sees, through the library the NVIDIA runtime mounts."""

    def __init__(self) -> None:
        self.lib = ctypes.CDLL("libnvidia-ml.so.1")
        if self.lib.nvmlInit_v2() != 0:
            raise OSError("nvmlInit failed")

    def busy(self) -> Tuple[str, int]:
        """(utilisation seen, processes holding memory). Only the first is activity: a
        forgotten kernel holding GPU memory is what an idle stop is for."""
        count = ctypes.c_uint(0)
        self.lib.nvmlDeviceGetCount_v2(ctypes.byref(count))
        why, held_total = "", 0
        listing = getattr(self.lib, "nvmlDeviceGetComputeRunningProcesses_v3", None) or getattr(
            self.lib, "nvmlDeviceGetComputeRunningProcesses_v2", None
        )
        for index in range(count.value):
            handle = ctypes.c_void_p()
            if self.lib.nvmlDeviceGetHandleByIndex_v2(index, ctypes.byref(handle)) != 0:
                continue
            rates = (ctypes.c_uint * 2)()
            if self.lib.nvmlDeviceGetUtilizationRates(handle, rates) == 0 and rates[0] > 0:
                why = why or "GPU %d at %d%%" % (index, rates[0])
            held = ctypes.c_uint(0)
            rc = listing(handle, ctypes.byref(held), None) if listing else 3
            if rc in (0, 7):  # 7: insufficient size, i.e. there are some
                held_total += held.value
        return why, held_total


def open_nvml() -> Optional[Nvml]:
    try:
        return Nvml()
    except (OSError, AttributeError):
        return None  # no GPU in this container


def look(
    where: Where, previous: Processes, interval: float, nvml: Optional[Nvml]
) -> Tuple[Dict[str, Any], Processes]:
    """What is happening now; `previous` is the last look's processes (for kernel CPU use)."""
    now = processes()
    sessions = sum(1 for command, _ in now.values() if SESSION.match(command))
    kernels = {pid: ticks for pid, (command, ticks) in now.items() if KERNEL.search(command)}
    asked = jupyter_kernels(where)
    if asked is not None:
        kernel_count, busy = len(asked), sum(1 for _, is_busy in asked if is_busy)
    else:
        kernel_count = len(kernels)
        threshold = BUSY_CPU_SHARE * interval * TICKS
        busy = sum(
            1
            for pid, ticks in kernels.items()
            if pid in previous and ticks - previous[pid][1] >= threshold
        )
    gpu_why, gpu_processes = nvml.busy() if nvml is not None else ("", 0)
    seen = {  # type: Dict[str, Any]
        "sessions": sessions,
        "kernels": kernel_count,
        "busy_kernels": busy,
        "gpu_busy": bool(gpu_why),
        "gpu_processes": gpu_processes,
    }
    reasons = []
    if sessions:
        reasons.append("%d SSH session(s)" % sessions)
    if busy:
        reasons.append("%d busy kernel(s)" % busy)
    if gpu_why:
        reasons.append(gpu_why)
    seen["active"] = ", ".join(reasons)
    return seen, now


def save(where: Where, state: Dict[str, Any]) -> None:
    os.makedirs(os.path.dirname(where.state), exist_ok=True)
    partial = where.state + ".partial"
    with open(partial, "w") as handle:
        json.dump(state, handle)
    os.chmod(partial, 0o644)
    os.replace(partial, where.state)


def watch(where: Where, target: int) -> int:
    idle_stop = int(os.environ.get("ENVKIT_IDLE_STOP") or 0)
    # A tenth of the limit (the stop comes at most that late), between 1 and 30 seconds.
    interval = min(30.0, max(1.0, idle_stop / 10.0)) if idle_stop else 30.0
    nvml = open_nvml()
    started = last_active = time.time()  # a start counts as activity: `ssh` woke it
    # Never within its first half minute: `envkit up` and a waking `ssh` need that long to
    # see it healthy and log in, however short the limit.
    grace = max(idle_stop, START_GRACE_S)
    previous = {}  # type: Processes
    while True:
        seen, previous = look(where, previous, interval, nvml)
        now = time.time()
        if seen["active"]:
            last_active = now
        state = dict(
            seen,
            checked=now,
            started=started,
            last_active=last_active,
            idle_stop_s=idle_stop or None,
            interval_s=interval,
        )
        if idle_stop and now - last_active >= idle_stop and now - started >= grace:
            state["stopped_idle"] = now
            save(where, state)
            sys.stderr.write("envkit: idle for %d s (team.idle_stop): stopping\n" % idle_stop)
            os.kill(target, signal.SIGTERM)
            return 0
        save(where, state)
        time.sleep(interval)


def peek(where: Where) -> int:
    try:
        with open(where.state) as handle:
            state = json.load(handle)
    except (OSError, ValueError):
        state = {}
    before = processes()
    time.sleep(0.5)  # a kernel's CPU use is a difference between two looks
    seen, _ = look(where, before, 0.5, open_nvml())
    state.update(seen, now=time.time())
    if seen["active"]:
        state["last_active"] = state["now"]
    json.dump(state, sys.stdout)
    sys.stdout.write("\n")
    return 0


def main(argv: List[str]) -> int:
    if argv[:1] == ["watch"] and len(argv) == 2 and argv[1].isdigit():
        return watch(Where(_settings()), int(argv[1]))
    if argv == ["peek"]:
        return peek(Where(_settings()))
    sys.stderr.write("usage: envkit-activity watch PID | envkit-activity peek\n")
    return 64


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
