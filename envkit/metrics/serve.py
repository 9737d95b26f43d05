"""`envkit metrics --serve ADDR`: an HTTP endpoint Prometheus scrapes. Each source is read again
and again by a thread of its own (every INTERVAL seconds), and a scrape answers at once from the
latest readings: a slow or hung engine never holds a scrape, a source whose last reading is
older than its bound is exported as down (never its old values as fresh). Loopback by default:
the endpoint has no authentication, so another address must be asked for by name."""

from __future__ import annotations

import ipaddress
import socket
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from envkit.addresses import canonical_address, with_port
from envkit.errors import EnvkitError
from envkit.metrics.collect import Reading, exported
from envkit.metrics.exposition import OPENMETRICS_TYPE, TEXT_TYPE, render

ADDRESS_FIX = "write HOST:PORT (127.0.0.1:9842, [::1]:9842) or :PORT for loopback"


def parse_address(value: str) -> tuple[str, int]:
    """HOST:PORT, [IPv6]:PORT or :PORT (loopback); the host an address literal, never a name."""
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) < 65536:
        raise EnvkitError(f"--serve {value}: not HOST:PORT with a port 1-65535", ADDRESS_FIX)
    if not host:
        return "127.0.0.1", int(port)
    try:
        return canonical_address(host), int(port)
    except Exception:
        raise EnvkitError(f"--serve {value}: {host} is not an IP address", ADDRESS_FIX) from None


class Refresher:
    """The latest reading of each source, kept fresh by one thread per source."""

    def __init__(self, readers: dict[str, Callable[[], Reading]], interval: float) -> None:
        self.interval = interval
        # A reading older than this is a source that stopped answering.
        self.stale_after = 3 * interval + 30
        self.started = time.time()
        self.latest: dict[str, Reading] = {}
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.threads = [
            threading.Thread(target=self._keep, args=(name, read), daemon=True, name=name)
            for name, read in readers.items()
        ]
        for thread in self.threads:
            thread.start()

    def _keep(self, name: str, read: Callable[[], Reading]) -> None:
        while not self.stop.is_set():
            try:
                reading = read()
            except Exception as exc:  # the thread must outlive any one bad reading
                reading = Reading(name, problem=f"{type(exc).__name__}: {exc}")
            if reading.problem:
                sys.stderr.write(f"envkit metrics: {name}: {reading.problem}\n")
            with self.lock:
                self.latest[name] = reading
            self.stop.wait(self.interval)

    def readings(self, now: float) -> list[Reading]:
        with self.lock:
            latest = dict(self.latest)
        out = []
        for thread in self.threads:
            reading = latest.get(thread.name)
            if reading is None:
                out.append(Reading(thread.name, problem="not read yet", at=self.started))
            elif now - reading.at > self.stale_after:
                why = f"no answer for {now - reading.at:.0f} s"
                out.append(Reading(thread.name, problem=why, at=reading.at))
            else:
                out.append(reading)
        return out


def _handler(refresher: Refresher) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path.split("?", 1)[0] not in ("/metrics", "/"):
                self.send_error(404, "envkit serves /metrics")
                return
            openmetrics = "application/openmetrics-text" in (self.headers.get("Accept") or "")
            now = time.time()
            body = render(exported(refresher.readings(now), now), openmetrics).encode()
            self.send_response(200)
            self.send_header("Content-Type", OPENMETRICS_TYPE if openmetrics else TEXT_TYPE)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            return  # a scrape every 15 s is not news

    return Handler


class _Server(ThreadingHTTPServer):
    daemon_threads = True


class _Server6(_Server):
    address_family = socket.AF_INET6


def serve(address: str, readers: dict[str, Callable[[], Reading]], interval: int) -> None:
    host, port = parse_address(address)
    if not ipaddress.ip_address(host).is_loopback:
        sys.stderr.write(
            f"envkit metrics: serving on {host}, beyond this machine, without authentication; "
            "put it behind a firewall or a proxy that checks who scrapes\n"
        )
    refresher = Refresher(readers, interval)
    try:
        server = (_Server6 if ":" in host else _Server)((host, port), _handler(refresher))
    except OSError as exc:
        raise EnvkitError(
            f"cannot listen on {with_port(host, port)}: {exc.strerror or exc}",
            "pick a free port with --serve HOST:PORT",
        ) from None
    sys.stderr.write(f"envkit metrics: serving http://{with_port(host, port)}/metrics\n")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        refresher.stop.set()
        server.server_close()
