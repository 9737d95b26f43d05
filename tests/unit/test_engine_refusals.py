"""An engine that refuses a call envkit makes (a docker-socket-proxy that forbids /info, an API
that lacks an endpoint) is an error naming the call and the engine, never a traceback. The
engine here is a real HTTP server on loopback speaking just enough of Docker's API: what a
socket proxy in front of a real engine answers."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.helpers import envkit

FORBIDDEN = ("/info",)


class _Proxy(BaseHTTPRequestHandler):
    def _send(self, status: int, body: object) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        path = self.path.split("?")[0]
        if path.endswith("/_ping"):
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"OK")
        elif path.endswith("/version"):
            self._send(200, {"Version": "20.10.24", "ApiVersion": "1.41", "Components": []})
        elif any(path.endswith(p) for p in FORBIDDEN):
            self._send(403, {"message": "forbidden by the socket proxy"})
        else:
            self._send(404, {"message": f"page not found: {path}"})

    do_HEAD = do_GET  # noqa: N815

    def log_message(self, *args: object) -> None:
        return None


@pytest.fixture
def proxy() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Proxy)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"tcp://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("command", [["status"], ["doctor", "--json"], ["up"], ["backup"]])
def test_a_call_the_engine_refuses_is_named_not_a_traceback(
    tmp_path: Path, proxy: str, command: list[str]
) -> None:
    (tmp_path / "envkit.yaml").write_text("name: proxied\nssh:\n  allow_no_keys: true\n")
    done = envkit(*command, cwd=tmp_path, env={"DOCKER_HOST": proxy})
    said = done.stdout + done.stderr
    assert "Traceback" not in said, said
    assert done.returncode in (1, 3), said
    if command[0] == "doctor":
        engine = next(f for f in json.loads(done.stdout)["findings"] if f["check"] == "engine")
        assert engine["status"] == "fail" and "refused GET /v1.41/info (403)" in engine["message"]
    else:
        assert "refused GET" in done.stderr and proxy.split("//")[1] in done.stderr, said
