"""The parent side of a run (standard library only): it feeds check ids to a worker process
(worker.py) and reads results from a dedicated pipe. A check that hangs past its timeout or crashes
the worker becomes an `error`; the worker is replaced and the run goes on with the next check."""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import tempfile
import time
from typing import Any, Callable

from .contract import CheckResult, Counts, RunnerConfig, check_result, empty_counts
from .location import python_code

HINTS = {
    "multigpu": "a collective that hangs usually means broken P2P (check ACS/IOMMU, try "
    "NCCL_P2P_DISABLE=1) or too little /dev/shm (raise shm_size)",
    "system": "a DataLoader that hangs or dies usually means /dev/shm is too small",
}


class _Worker:
    def __init__(self, python: str, request: dict[str, Any]) -> None:
        read_fd, write_fd = os.pipe()
        self.log = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115 - lives as long as the worker
        code = python_code(f"core.worker.worker_main({write_fd})")
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        # A new session, so a timeout can kill the worker and everything it started (DDP ranks).
        self.proc = subprocess.Popen(
            [python, "-c", code],
            stdin=subprocess.PIPE,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            pass_fds=(write_fd,),
            text=True,
            start_new_session=True,
            env=env,
        )
        os.close(write_fd)
        self.events_fd = read_fd
        self.pending = b""  # bytes read from the pipe that do not yet end a line
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()

    def next_event(self, timeout: float) -> dict[str, Any] | None:
        """The next event, or None on timeout; {'event': 'exit'} when the worker died.

        Reads the raw pipe into our own buffer: one read can carry several events, and select()
        cannot see lines already sitting in a file object's buffer."""
        deadline = time.monotonic() + max(timeout, 0.0)
        while b"\n" not in self.pending:
            ready, _, _ = select.select(
                [self.events_fd], [], [], max(deadline - time.monotonic(), 0.0)
            )
            if not ready:
                return None
            chunk = os.read(self.events_fd, 65536)
            if not chunk:
                self.proc.wait()
                return {"event": "exit", "code": self.proc.returncode}
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        return dict(json.loads(line))

    def log_tail(self, lines: int = 8) -> str:
        self.log.seek(0)
        return "".join(self.log.readlines()[-lines:]).strip()

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        os.close(self.events_fd)
        self.log.close()


def _crash_message(code: int | None, tail: str) -> str:
    if code is not None and code < 0:
        how = f"killed by signal {signal.Signals(-code).name}"
    else:
        how = f"exited with code {code}"
    return f"the check crashed its process ({how})" + (f"; last output:\n{tail}" if tail else "")


class _Session:
    """Feeds pending checks to workers; each event either records a result or moves a deadline."""

    def __init__(
        self,
        python: str,
        config: RunnerConfig,
        specs: list[Any],
        modules: list[str],
        on_start: Callable[[str], None] | None = None,
    ) -> None:
        self.python, self.config, self.modules = python, config, modules
        self.on_start = on_start
        self.scale = float(config.get("timeout_scale", 1.0))
        self.timeouts = {s.id: s.timeout_for(config) * self.scale for s in specs}
        # Starting a worker (interpreter + import torch) and handing over between checks are not
        # check work: timeout_scale may stretch those allowances, never shrink them.
        self.slack = max(self.scale, 1.0)
        self.pending = [s.id for s in specs]
        self.results: list[CheckResult] = []
        self.environment: dict[str, Any] = {}

    def _error(self, check_id: str, message: str, duration: float = 0.0) -> None:
        self.results.append(check_result(check_id, "error", round(duration, 3), message, []))
        self.pending.remove(check_id)

    def run(self) -> None:
        while self.pending:
            request = {
                "config": self.config,
                "ids": self.pending,
                "fingerprint": not self.environment,
                "modules": self.modules,
            }
            worker = _Worker(self.python, request)
            try:
                self._drive(worker)
            finally:
                worker.kill()

    def _drive(self, worker: _Worker) -> None:
        current: str | None = None
        deadline = time.monotonic() + 120 * self.slack  # start-up: interpreter + import torch
        while self.pending:
            event = worker.next_event(deadline - time.monotonic()) or {"event": "timeout"}
            kind = event["event"]
            if kind == "timeout":
                if current is None:
                    self._error(
                        self.pending[0], "the check process did not start: " + worker.log_tail()
                    )
                else:
                    hint = HINTS.get(current.split(".")[0], "")
                    self._error(
                        current,
                        f"timed out after {self.timeouts[current]:.0f} s and was stopped"
                        + (f"; hint: {hint}" if hint else ""),
                        self.timeouts[current],
                    )
                return
            if kind == "exit":
                self._error(
                    current or self.pending[0], _crash_message(event["code"], worker.log_tail())
                )
                return
            if kind == "done":
                return
            current, deadline = self._handle(event, current, deadline, worker)

    def _handle(
        self, event: dict[str, Any], current: str | None, deadline: float, worker: _Worker
    ) -> tuple[str | None, float]:
        kind = event["event"]
        if kind == "env":
            self.environment = event["environment"]
            no_torch = self.config.get("torch") is False  # torch: none: torch-free checks run
            if self.environment.get("torch") is None and not no_torch:
                why = self.environment.get("torch_error", "import failed")
                for check_id in list(self.pending):
                    self._error(check_id, f"torch cannot be imported by {self.python}: {why}")
        elif kind == "start":
            if self.on_start is not None:
                self.on_start(event["id"])
            return event["id"], time.monotonic() + self.timeouts[event["id"]]
        elif kind == "result":
            self.results.append(event["result"])
            self.pending.remove(event["result"]["id"])
            return None, time.monotonic() + 30 * self.slack
        return current, deadline


def run_checks(
    python: str,
    config: RunnerConfig,
    specs: list[Any],
    modules: list[str],
    environment: dict[str, Any] | None = None,
    on_start: Callable[[str], None] | None = None,
) -> tuple[dict[str, Any], list[CheckResult]]:
    """Run specs in order in workers that import `modules` (where the specs are registered);
    returns (environment fingerprint, results). An `environment` already taken is kept (no
    second fingerprint); `on_start` hears each check's id as it starts."""
    session = _Session(python, config, specs, modules, on_start)
    session.environment = dict(environment or {})
    session.run()
    return session.environment, session.results


def summarize(results: list[CheckResult]) -> Counts:
    counts = empty_counts()
    for result in results:
        counts[result["status"]] += 1
    return counts
