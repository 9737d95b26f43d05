"""system.sshd waits a moment for a container that has just started (its entrypoint makes the
login user before sshd listens), and still fails where nothing ever listens."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from envkit.checks.suite.system import _banner
from tests.helpers import free_port


def test_an_sshd_that_starts_a_moment_later_is_found() -> None:
    port = free_port()

    def serve_later() -> None:
        time.sleep(1.0)
        with socket.socket() as server:
            server.bind(("127.0.0.1", port))
            server.listen(1)
            conn, _ = server.accept()
            with conn:
                conn.sendall(b"SSH-2.0-OpenSSH_9.2p1 stand-in\r\n")

    thread = threading.Thread(target=serve_later, daemon=True)
    thread.start()
    assert _banner(10.0, port).startswith("SSH-2.0-")
    thread.join(5)


def test_nothing_listening_fails_after_the_wait() -> None:
    port = free_port()
    start = time.monotonic()
    with pytest.raises(AssertionError, match="not listening on port 22"):
        _banner(1.0, port)
    assert 0.9 <= time.monotonic() - start < 5
