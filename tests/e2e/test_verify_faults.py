"""Verification that always ends: whatever a target does mid-run (paused, killed, a port that
accepts TCP but never speaks SSH, a peer that stops answering), `envkit verify` ends within
--target-timeout plus its stated grace, with one line saying which of these happened and exit 3,
and leaves nothing behind in the target. Real engine, real sshd, real OpenSSH client."""

from __future__ import annotations

import json
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from envkit.verify.fleet import GRACE_S
from tests.e2e.conftest import INTERRUPTIBLE_ENVKIT, StartContainer, ssh_port
from tests.e2e.images import docker, stall_python
from tests.helpers import envkit

pytestmark = [pytest.mark.docker, pytest.mark.slow]
LIMIT = 12  # --target-timeout in these tests
LIGHT = ("--only", "tensor.creation", "--no-bench")


@pytest.fixture
def slow_python_container(env_image: str, start_container: StartContainer) -> str:
    """A container whose python3 sleeps for a minute instead of running the suite: the run is
    under way (its files in /tmp, its processes running) when the test strikes."""
    name = start_container(env_image)
    stall_python(name, 60)
    return name


def _verify_in_background(cwd: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*INTERRUPTIBLE_ENVKIT, "verify", *args, "--target-timeout", str(LIMIT),
         "--json-file", "report.json"],
        cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def _wait_for_suite(container: str) -> None:
    """Until the wrapper has started the suite in the container."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        found = docker("exec", container, "sh", "-c", "ls -d /tmp/envkit-run-*/pid", check=False)
        if found.returncode == 0:
            return
        time.sleep(0.3)
    raise AssertionError("the suite never started")


def _leftovers(container: str) -> str:
    files = docker("exec", container, "sh", "-c", "ls -d /tmp/envkit-* 2>/dev/null", check=False)
    procs = docker("exec", container, "sh", "-c", "cat /proc/[0-9]*/cmdline | tr '\\0' ' '")
    running = "checks.zip" if "checks.zip" in procs.stdout else ""
    return (files.stdout.strip() + " " + running).strip()


def _finish(process: subprocess.Popen[str], started: float) -> tuple[int, str, float]:
    out, err = process.communicate(timeout=LIMIT + GRACE_S + 30)
    said = " ".join((out + err).split())  # the table wraps long lines
    return process.returncode, said, time.monotonic() - started


def test_a_container_paused_mid_run(slow_python_container: str, tmp_path: Path) -> None:
    name = slow_python_container
    started = time.monotonic()
    process = _verify_in_background(tmp_path, "--target", f"docker://{name}", *LIGHT)
    _wait_for_suite(name)
    docker("pause", name)
    code, said, took = _finish(process, started)
    assert code == 3, said
    assert f"container {name} is paused" in said and "docker unpause" in said, said
    assert "Traceback" not in said
    assert took < LIMIT + GRACE_S, f"took {took:.0f}s"
    # Once thawed, the suite's own deadline inside the container has passed: it ends and the
    # wrapper removes the run's folder.
    docker("unpause", name)
    deadline = time.monotonic() + 30
    while _leftovers(name) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not _leftovers(name), _leftovers(name)


def test_a_container_killed_mid_run(slow_python_container: str, tmp_path: Path) -> None:
    name = slow_python_container
    started = time.monotonic()
    process = _verify_in_background(tmp_path, "--target", f"docker://{name}", *LIGHT)
    _wait_for_suite(name)
    docker("kill", name)
    code, said, took = _finish(process, started)
    assert code == 3, said
    assert f"container {name} is exited (killed" in said, said
    assert "did not finish" not in said and "APIError" not in said and "Traceback" not in said
    assert took < LIMIT + GRACE_S


def test_a_frozen_suite_ends_at_the_deadline_and_leaves_nothing(
    slow_python_container: str, tmp_path: Path
) -> None:
    """The container answers but the suite never does (here: stopped with SIGSTOP)."""
    name = slow_python_container
    started = time.monotonic()
    process = _verify_in_background(tmp_path, "--target", f"docker://{name}", *LIGHT)
    _wait_for_suite(name)
    docker("exec", name, "sh", "-c", "kill -STOP $(cat /tmp/slow.pid)")
    code, said, took = _finish(process, started)
    assert code == 3, said
    assert f"did not finish on docker://{name} within {LIMIT}s" in said, said
    assert took < LIMIT + GRACE_S
    assert not _leftovers(name), _leftovers(name)


@pytest.fixture
def silent_port() -> Iterator[int]:
    """Accepts TCP connections and never says a word: not an SSH server."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.5)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join(5)
    for conn in held:
        conn.close()
    server.close()


def test_a_port_that_never_speaks_ssh(silent_port: int, tmp_path: Path) -> None:
    started = time.monotonic()
    process = _verify_in_background(tmp_path, "--target", f"ssh://dev@127.0.0.1:{silent_port}")
    code, said, took = _finish(process, started)
    assert code == 3, said
    assert f"127.0.0.1:{silent_port} accepted no connection, or sent no SSH banner" in said, said
    assert "Traceback" not in said and "No existing session" not in said
    assert took < LIMIT + GRACE_S


class _FreezingProxy:
    """Relays TCP to a real sshd, then stops relaying (and reading) on any connection older
    than `freeze_after` seconds: a peer that stops answering mid-session."""

    def __init__(self, upstream: int, freeze_after: float) -> None:
        self.upstream, self.freeze_after = upstream, freeze_after
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen()
        self.port = self.server.getsockname()[1]
        self.stop = threading.Event()
        self.sockets: list[socket.socket] = []
        self.acceptor = threading.Thread(target=self._accept, daemon=True)
        self.acceptor.start()

    def _accept(self) -> None:
        self.server.settimeout(0.5)
        while not self.stop.is_set():
            try:
                client = self.server.accept()[0]
            except TimeoutError:
                continue
            upstream = socket.create_connection(("127.0.0.1", self.upstream))
            self.sockets += [client, upstream]
            born = time.monotonic()
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b, born), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket, born: float) -> None:
        source.settimeout(0.2)
        while not self.stop.is_set():
            if time.monotonic() - born > self.freeze_after:
                time.sleep(0.2)  # frozen: read nothing, send nothing, keep the socket open
                continue
            try:
                data = source.recv(65536)
            except TimeoutError:
                continue
            except OSError:
                return
            if not data:
                return
            sink.sendall(data)

    def close(self) -> None:
        # The acceptor must leave accept() before its socket closes: closing under it raises
        # EBADF in the thread (an unhandled thread exception pytest reports at teardown).
        self.stop.set()
        self.acceptor.join(timeout=5)
        for sock in self.sockets:
            sock.close()
        self.server.close()


def test_an_ssh_peer_that_stops_answering(
    env_image: str, start_container: StartContainer, project_dir: Path, tmp_path: Path
) -> None:
    port = ssh_port(start_container(env_image, publish_ssh=True))
    proxy = _FreezingProxy(port, freeze_after=2.0)
    try:
        url = (
            f"ssh://dev@127.0.0.1:{proxy.port}?identity={project_dir / 'id_test'}"
            f"&known_hosts={tmp_path / 'known_hosts'}"
        )
        started = time.monotonic()
        done = envkit("verify", "--target", url, "--target-timeout", str(LIMIT), cwd=tmp_path)
        took = time.monotonic() - started
    finally:
        proxy.close()
    said = " ".join((done.stdout + done.stderr).split())
    assert done.returncode == 3, said
    assert "stopped answering" in said or "did not answer within" in said, said
    assert "Traceback" not in said
    assert took < LIMIT + GRACE_S, f"took {took:.0f}s"


def test_ctrl_c_mid_run_ends_the_suite_there_and_removes_its_files(
    slow_python_container: str, tmp_path: Path
) -> None:
    import signal

    name = slow_python_container
    process = _verify_in_background(tmp_path, "--target", f"docker://{name}", *LIGHT)
    _wait_for_suite(name)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 130, out + err
    assert "Traceback" not in err
    assert not _leftovers(name), _leftovers(name)


def test_a_frozen_suite_over_ssh_ends_at_the_deadline_and_leaves_nothing_remote(
    env_image: str, start_container: StartContainer, project_dir: Path, tmp_path: Path
) -> None:
    """The SSH transport is bounded like docker's: timeout(1) in the target ends the suite, the
    wrapper removes its folder, and no process of the run is left on the remote host."""
    name = start_container(env_image, publish_ssh=True)
    stall_python(name, 60)
    url = (
        f"ssh://dev@127.0.0.1:{ssh_port(name)}?identity={project_dir / 'id_test'}"
        f"&known_hosts={tmp_path / 'known_hosts'}"
    )
    started = time.monotonic()
    process = _verify_in_background(tmp_path, "--target", url, *LIGHT)
    _wait_for_suite(name)
    docker("exec", name, "sh", "-c", "kill -STOP $(cat /tmp/slow.pid)")
    code, said, took = _finish(process, started)
    assert code == 3, said
    # the JSON report: the table wraps a URL this long mid-word
    [entry] = json.loads((tmp_path / "report.json").read_text())["unreachable"]
    assert f"did not finish on {url} within {LIMIT}s" in entry["message"], entry
    assert took < LIMIT + GRACE_S
    time.sleep(1)  # the wrapper's exit trap runs as the session closes
    assert not _leftovers(name), _leftovers(name)
    sleeping = docker("exec", name, "sh", "-c", "cat /proc/[0-9]*/cmdline | tr '\\0' ' '")
    assert "sleep 60" not in sleeping.stdout, "the frozen suite outlived the run"
