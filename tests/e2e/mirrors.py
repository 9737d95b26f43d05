"""Local mirrors on loopback that record what they serve: a PEP 503 pip index with one wheel of
its own (every other project's page comes from PyPI, as on a real mirror), and an apt reverse
proxy in front of deb.debian.org. Builds reach them with build_network: host."""

from __future__ import annotations

import base64
import hashlib
import http.server
import io
import threading
import urllib.error
import urllib.request
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager

PROBE = "envkit_probe-0.1-py3-none-any.whl"


def probe_wheel() -> bytes:
    """The same bytes on every call (fixed timestamps), so a lock can name its sha256."""
    files = {
        "envkit_probe/__init__.py": b"SERVED_BY = 'envkit-test-index'\n",
        "envkit_probe-0.1.dist-info/METADATA": (
            b"Metadata-Version: 2.1\nName: envkit-probe\nVersion: 0.1\n"
        ),
        "envkit_probe-0.1.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: envkit-test\n"
        b"Root-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as wheel:
        for name, data in files.items():
            wheel.writestr(zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0)), data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record.append(f"{name},sha256={digest},{len(data)}")
        record.append("envkit_probe-0.1.dist-info/RECORD,,")
        info = zipfile.ZipInfo("envkit_probe-0.1.dist-info/RECORD", date_time=(2020, 1, 1, 0, 0, 0))
        wheel.writestr(info, "\n".join(record) + "\n")
    return buffer.getvalue()


class Recorder:
    def __init__(self) -> None:
        self.paths: list[str] = []
        self.lock = threading.Lock()

    def add(self, path: str) -> None:
        with self.lock:
            self.paths.append(path)


@contextmanager
def serve(handler: type[http.server.BaseHTTPRequestHandler]) -> Iterator[int]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


class _Index(http.server.BaseHTTPRequestHandler):
    """The index's handler; pip_index makes a subclass carrying its recorder and wheel."""

    recorder: Recorder
    wheel: bytes
    digest: str
    upstream: str | None

    def do_GET(self) -> None:
        self.recorder.add(self.path)
        if self.path.rstrip("/") == "/simple/envkit-probe":
            body = f'<a href="/packages/{PROBE}#sha256={self.digest}">{PROBE}</a>'.encode()
            self._send(200, body, "text/html")
        elif self.path == f"/packages/{PROBE}":
            # As PyPI's file host and the mirrors say of a release file: it never changes.
            immutable = {"Cache-Control": "max-age=365000000, immutable, public"}
            self._send(200, self.wheel, "application/octet-stream", immutable | {"ETag": "1"})
        elif self.path.startswith("/simple/") and self.upstream:
            self._proxy()
        else:
            self._send(404, b"not here", "text/plain")

    def do_HEAD(self) -> None:  # uv asks before it fetches a file
        self.recorder.add(f"HEAD {self.path}")
        size = len(self.wheel) if self.path == f"/packages/{PROBE}" else 0
        self.send_response(200 if size else 404)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(size))
        self.end_headers()

    def _proxy(self) -> None:
        """Like a real mirror, every other project from upstream (its files stay on upstream's
        file host, linked absolutely from the page)."""
        request = urllib.request.Request(  # noqa: S310 - a fixed https upstream
            f"{self.upstream}{self.path}", headers={"Accept": self.headers.get("Accept", "*/*")}
        )
        try:
            with urllib.request.urlopen(request, timeout=60) as answer:  # noqa: S310
                kind = answer.headers.get("Content-Type", "text/html")
                self._send(answer.status, answer.read(), kind)
        except urllib.error.HTTPError as exc:
            self._send(exc.code, b"", "text/plain")

    def _send(
        self, code: int, body: bytes, kind: str, headers: dict[str, str] | None = None
    ) -> None:
        self.send_response(code)
        self.send_header("Content-Type", kind)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        return None


@contextmanager
def pip_index(recorder: Recorder, upstream: str | None = "https://pypi.org") -> Iterator[str]:
    wheel = probe_wheel()
    facts = {"recorder": recorder, "wheel": wheel, "upstream": upstream}
    handler = type("Index", (_Index,), {**facts, "digest": hashlib.sha256(wheel).hexdigest()})
    with serve(handler) as port:
        yield f"http://127.0.0.1:{port}"


@contextmanager
def apt_proxy(recorder: Recorder, upstream: str = "http://deb.debian.org") -> Iterator[str]:
    class Proxy(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            recorder.add(self.path)
            try:
                with urllib.request.urlopen(upstream + self.path, timeout=60) as answer:  # noqa: S310
                    body = answer.read()
                    code = answer.status
            except urllib.error.HTTPError as exc:
                body, code = b"", exc.code
            self.send_response(code)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            return None

    with serve(Proxy) as port:
        yield f"http://127.0.0.1:{port}"


@contextmanager
def private_index(recorder: Recorder, user: str, password: str) -> Iterator[str]:
    """A private index: the probe wheel alone, behind HTTP basic auth (every request without
    the right credentials is answered 401 and recorded as such)."""
    wheel = probe_wheel()
    expected = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()

    class Private(_Index):
        def do_GET(self) -> None:
            if self.headers.get("Authorization") != expected:
                self.recorder.add(f"401 {self.path}")
                self._send(
                    401, b"credentials", "text/plain", {"WWW-Authenticate": 'Basic realm="x"'}
                )
                return
            super().do_GET()

        def do_HEAD(self) -> None:
            if self.headers.get("Authorization") != expected:
                self.recorder.add(f"401 HEAD {self.path}")
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Basic realm="x"')
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            super().do_HEAD()

    facts = {"recorder": recorder, "wheel": wheel, "upstream": None}
    handler = type("Index", (Private,), {**facts, "digest": hashlib.sha256(wheel).hexdigest()})
    with serve(handler) as port:
        yield f"http://127.0.0.1:{port}"
