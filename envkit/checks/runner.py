"""Run checks isolated: a parent (standard library only) feeds check ids to a worker process and
reads results from a dedicated pipe. A check that hangs past its timeout or crashes the worker
becomes an `error`; the worker is replaced and the suite goes on with the next check.

    python -m envkit.checks run [--config JSON] [--out FILE]      (or: python bundle.zip run ...)
    python -m envkit.checks capture [--conda-prefix P] [--out F]  (installed state, for locks)
    python -m envkit.checks health [--drain] ...                  (node health: checks/health.py)
    torchrun ... bundle.zip collective --out-dir D                (checks/crossnode.py)
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any, TextIO

from . import SCHEMA_VERSION
from .contract import CheckResult, Counts, Metric, TargetReport, check_result, empty_counts

PACKAGE = __package__ or "envkit.checks"
# Where the package lives: a directory or a zip file (when shipped as a bundle).
ROOT = (
    os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if "." not in PACKAGE
    else (os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
)
HINTS = {
    "multigpu": "a collective that hangs usually means broken P2P (check ACS/IOMMU, try "
    "NCCL_P2P_DISABLE=1) or too little /dev/shm (raise shm_size)",
    "system": "a DataLoader that hangs or dies usually means /dev/shm is too small",
}


def _load_all() -> None:
    from . import (  # noqa: F401
        autograd,
        bench,
        cpu_bench,
        cuda,
        lockcheck,
        multigpu,
        notebook,
        system,
        tensor,
    )


# ---------------------------------------------------------------- worker side (imports torch)


def _result(
    spec_id: str, status: str, started: float, message: str, metrics: list[Metric]
) -> CheckResult:
    duration = round(time.perf_counter() - started, 4)
    return check_result(spec_id, status, duration, message, metrics)


def run_one(spec: Any, config: dict[str, Any]) -> CheckResult:
    from .context import Context
    from .registry import CheckFailed, Skip

    ctx = Context(config)
    ctx.current = spec.id
    started = time.perf_counter()
    try:
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
    if status == "pass":
        below = [
            m
            for m in ctx.metrics
            if m["threshold"] is not None
            and m["fraction_of_peak"] is not None
            and m["fraction_of_peak"] < m["threshold"]
        ]
        if below:
            status = "fail"
            message = "; ".join(
                f"{m['name']} at {m['fraction_of_peak']:.1%} of peak, below the "
                f"threshold {m['threshold']:.0%}"
                for m in below
            )
    return _result(spec.id, status, started, str(message), ctx.metrics)


def worker_main(event_fd: int) -> None:
    _load_all()
    from .fingerprint import fingerprint
    from .registry import CHECKS

    events = os.fdopen(event_fd, "w", buffering=1)
    request = json.loads(sys.stdin.readline())
    config = request["config"]

    def emit(event: dict[str, Any]) -> None:
        events.write(json.dumps(event) + "\n")
        events.flush()

    if request.get("fingerprint"):
        emit({"event": "env", "environment": fingerprint()})
    for check_id in request["ids"]:
        emit({"event": "start", "id": check_id})
        emit({"event": "result", "result": run_one(CHECKS[check_id], config)})
    emit({"event": "done"})


# ---------------------------------------------------------------- parent side (stdlib only)


class _Worker:
    def __init__(
        self, python: str, config: dict[str, Any], ids: list[str], fingerprint: bool
    ) -> None:
        read_fd, write_fd = os.pipe()
        self.log = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115 - lives as long as the worker
        code = (
            f"import sys; sys.path.insert(0, {ROOT!r}); "
            f"from {PACKAGE}.runner import worker_main; worker_main({write_fd})"
        )
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
        self.proc.stdin.write(
            json.dumps({"config": config, "ids": ids, "fingerprint": fingerprint}) + "\n"
        )
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

    def __init__(self, python: str, config: dict[str, Any], specs: list[Any]) -> None:
        self.python, self.config = python, config
        self.scale = float(config.get("timeout_scale", 1.0))
        self.timeouts = {s.id: s.timeout_s * self.scale for s in specs}
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
            worker = _Worker(
                self.python, self.config, self.pending, fingerprint=not self.environment
            )
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
            if self.environment.get("torch") is None:  # nothing can run without torch
                why = self.environment.get("torch_error", "import failed")
                for check_id in list(self.pending):
                    self._error(check_id, f"torch cannot be imported by {self.python}: {why}")
        elif kind == "start":
            return event["id"], time.monotonic() + self.timeouts[event["id"]]
        elif kind == "result":
            self.results.append(event["result"])
            self.pending.remove(event["result"]["id"])
            return None, time.monotonic() + 30 * self.slack
        return current, deadline


def run_checks(
    python: str, config: dict[str, Any], specs: list[Any]
) -> tuple[dict[str, Any], list[CheckResult]]:
    """Run specs in order; returns (environment fingerprint, results)."""
    session = _Session(python, config, specs)
    session.run()
    return session.environment, session.results


def summarize(results: list[CheckResult]) -> Counts:
    tally: dict[str, int] = {"pass": 0, "fail": 0, "skip": 0, "error": 0}
    for result in results:
        tally[result["status"]] = tally.get(result["status"], 0) + 1
    counts = empty_counts()
    counts["pass"], counts["fail"] = tally["pass"], tally["fail"]
    counts["skip"], counts["error"] = tally["skip"], tally["error"]
    return counts


def run_suite(config: dict[str, Any], python: str | None = None) -> TargetReport:
    from .registry import select as select_checks
    from .userchecks import run_user_checks

    _load_all()  # registering imports the check modules; they import torch only when run
    specs = select_checks(
        list(config.get("only") or []),
        list(config.get("skip") or []),
        bool(config.get("bench", True)),
    )
    started = time.time()
    environment, results = run_checks(python or sys.executable, config, specs)
    if config.get("user_checks_dir"):
        results += run_user_checks(
            python or sys.executable,
            config["user_checks_dir"],
            float(config.get("user_checks_timeout_s", 600)),
        )
    return {
        "schema_version": SCHEMA_VERSION,
        "target": config.get("target", "local"),
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "duration_s": round(time.time() - started, 3),
        "environment": environment,
        "summary": summarize(results),
        "checks": results,
    }


def _write(report: TargetReport, out: str | None, stream: TextIO) -> None:
    text = json.dumps(report, indent=2)
    if out:
        Path(out).write_text(text + "\n")
    else:
        stream.write(text + "\n")


def _capture(conda_prefix: str | None, out: str | None) -> int:
    from .lockstate import capture

    state, arch = capture(conda_prefix)
    text = json.dumps({"arch": arch, "state": state}, indent=1, sort_keys=True)
    if out:
        Path(out).write_text(text + "\n")
    else:
        sys.stdout.write(text + "\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    import argparse

    args_given = sys.argv[1:] if argv is None else argv
    if args_given[:1] == ["health"]:
        from .health import main as health_main

        return health_main(args_given[1:])
    if args_given[:1] == ["collective"] and len(args_given) == 3 and args_given[1] == "--out-dir":
        from .crossnode import main as collective_main

        return collective_main(args_given[2])
    parser = argparse.ArgumentParser(prog="envkit-checks", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run the suite and print (or write) the JSON report")
    run.add_argument("--config", default="{}", help="verification settings as JSON")
    run.add_argument("--out", help="write the report here instead of stdout")
    run.add_argument("--python", help="interpreter for the checks (default: this one)")
    sub.add_parser("list", help="list check ids and what each catches")
    sub.add_parser("health", help="node health mode (see checks/health.py)", add_help=False)
    sub.add_parser("collective", help="multi-node all-reduce under torchrun", add_help=False)
    captured = sub.add_parser("capture", help="print what is installed here, as lock sections")
    captured.add_argument("--conda-prefix", help="the conda environment to read (if any)")
    captured.add_argument("--out", help="write the JSON here instead of stdout")
    args = parser.parse_args(argv)
    if args.command == "capture":
        return _capture(args.conda_prefix, args.out)
    if args.command == "list":
        _load_all()
        from .registry import CHECKS

        for spec in CHECKS.values():
            sys.stdout.write(f"{spec.id:<28} {spec.doc.splitlines()[0] if spec.doc else ''}\n")
        return 0
    report = run_suite(json.loads(args.config), args.python)
    _write(report, args.out, sys.stdout)
    return 1 if report["summary"]["fail"] or report["summary"]["error"] else 0
