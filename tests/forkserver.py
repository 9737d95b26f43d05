"""`python -m envkit ARGS` for the tests, without paying Python's and envkit's imports for each
run: one server per test process imports what every run imports (the CLI, render's and init's
modules, their libraries), then forks a child per run. The child is the run's own process, as
`subprocess.run` would make it: its own cwd, environment, sys.path[0] (the cwd, as -m sets it)
and argv, the caller's stdin, stdout and stderr on files of its own, and it ends as the
interpreter ends any program (SystemExit's code, a traceback and 1, atexit handlers, threads
joined). What the server imports once is only what a run would import anyway, never the
checks (they register themselves when imported) nor anything that reads the environment at
import time. Measured on two workers, nothing else running: two files of CLI tests
(test_init_survey, test_project_torch_lines; 146 tests) took 68.5 s as fresh interpreters,
21.2 s forked.

ENVKIT_TESTS_FORK=0 runs every command as a fresh `python -m envkit` instead."""

from __future__ import annotations

import atexit
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import IO

# What every run imports, and render's and init's modules: the bulk of a run's start-up
PRELOAD = ("envkit.cli.entry", "envkit.cli.registry", "envkit.commands.render",
           "envkit.commands.init", "envkit.render.outputs")  # fmt: skip
# What the loader and the interpreter read once, at a process's start (library paths, the
# module path, stdio's encoding): a run asking for other values than the server started with
# is a fresh interpreter
AT_START = ("LD_", "PYTHON", "LC_", "LANG")
_server: tuple[subprocess.Popen[bytes], socket.socket] | None = None
_started_with: dict[str, str] = {}


def _start() -> tuple[subprocess.Popen[bytes], socket.socket] | None:
    global _server
    if _server is None or _server[0].poll() is not None:
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        _started_with.clear()
        _started_with.update(os.environ)
        server = subprocess.Popen(
            [sys.executable, __file__, str(theirs.fileno())], pass_fds=[theirs.fileno()]
        )
        theirs.close()
        if mine.recv(16) != b"ready":  # the preloads failed: every run as its own interpreter
            server.kill()
            server.wait()
            return None
        _server = (server, mine)
        atexit.register(_stop)
    return _server


def _stop() -> None:
    if _server is not None:
        _server[1].close()  # the server's end reads nothing more: it exits
        _server[0].wait(timeout=30)


def run(
    args: tuple[str, ...], cwd: Path | None, env: Mapping[str, str], timeout: float
) -> subprocess.CompletedProcess[str] | None:
    """The run's result, as subprocess.run(capture_output=True, text=True) gives it; None
    where no server can be had (then the caller runs a fresh interpreter)."""
    if os.environ.get("ENVKIT_TESTS_FORK") == "0" or (found := _start()) is None:
        return None
    if _at_start(env) != _at_start(_started_with):
        return None
    _, channel = found
    request = {"args": list(args), "cwd": str(cwd or Path.cwd()), "env": dict(env)}
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        stdin = _stdin()
        try:
            message = [json.dumps(request).encode()]
            socket.send_fds(channel, message, [stdin, out.fileno(), err.fileno()])
        finally:
            os.close(stdin)
        pid = int(_line(channel, None))
        try:
            status = int(_line(channel, timeout))
        except TimeoutError:
            os.kill(pid, signal.SIGKILL)
            _line(channel, None)
            raise subprocess.TimeoutExpired(["envkit", *args], timeout) from None
        text = [_text(file) for file in (out, err)]
    return subprocess.CompletedProcess(["envkit", *args], status, *text)


def _at_start(env: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k.startswith(AT_START)}


def _stdin() -> int:
    """A copy of this process's own fd 0, as a child of subprocess.run inherits it (pytest's
    sys.stdin is not it); /dev/null where it is closed."""
    try:
        return os.dup(0)
    except OSError:
        return os.open(os.devnull, os.O_RDONLY)


def _text(file: IO[bytes]) -> str:
    """What the child wrote, as text=True reads it (universal newlines)."""
    file.seek(0)
    return file.read().decode().replace("\r\n", "\n").replace("\r", "\n")


def _line(channel: socket.socket, timeout: float | None) -> str:
    channel.settimeout(timeout)
    found = b""
    while not found.endswith(b"\n"):
        chunk = channel.recv(1)
        if not chunk:
            raise RuntimeError("the envkit fork server ended")
        found += chunk
    return found.decode().strip()


def _serve(channel: socket.socket) -> dict[str, object]:
    """Answers requests until the channel closes (then exits); returns only in a forked child,
    with its request applied to the process."""
    while True:
        message, fds, _, _ = socket.recv_fds(channel, 1 << 20, 3)
        if not message:
            sys.exit(0)
        request = json.loads(message)
        pid = os.fork()
        if pid == 0:
            channel.close()
            for target, fd in enumerate(fds):
                os.dup2(fd, target)
                os.close(fd)
            return dict(request)
        for fd in fds:
            os.close(fd)
        channel.sendall(f"{pid}\n".encode())
        _, status = os.waitpid(pid, 0)
        channel.sendall(f"{os.waitstatus_to_exitcode(status)}\n".encode())


def _child(request: dict[str, object]) -> None:
    """The run, as `python -m envkit ARGS` in CWD with ENV would make it."""
    import runpy

    cwd = str(request["cwd"])
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update({str(k): str(v) for k, v in dict(request["env"]).items()})  # type: ignore[call-overload]
    sys.path[0] = cwd
    sys.argv = ["envkit", *map(str, request["args"])]  # type: ignore[call-overload]
    runpy.run_module("envkit", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    channel = socket.socket(fileno=int(sys.argv[1]))
    sys.path[0] = str(Path(__file__).resolve().parents[1])  # envkit, wherever this runs from
    try:
        for module in PRELOAD:
            __import__(module)
    except Exception:
        sys.exit(1)
    channel.sendall(b"ready")
    _child(_serve(channel))
