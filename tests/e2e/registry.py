"""A real registry for the tests: Debian's docker-registry (the CNCF distribution registry) on
loopback, with htpasswd (bcrypt) authentication and its storage in a temp folder; and a Docker
client configuration of the tests' own that `docker login` has filled. Started per test that
asks, stopped and deleted after."""

from __future__ import annotations

import secrets
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers import find_tool, free_port


@dataclass(frozen=True)
class Registry:
    address: str  # 127.0.0.1:PORT
    user: str
    password: str
    docker_config: Path  # DOCKER_CONFIG holding the login

    def env(self) -> dict[str, str]:
        return {"DOCKER_CONFIG": str(self.docker_config)}


def _answers(address: str) -> bool:
    try:
        urllib.request.urlopen(f"http://{address}/v2/", timeout=2)
    except urllib.error.HTTPError as exc:
        return exc.code == 401  # up, and asking for credentials
    except OSError:
        return False
    return False


@pytest.fixture
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registry]:
    if find_tool("docker-registry") is None or find_tool("htpasswd") is None:
        pytest.fail("docker-registry and htpasswd are missing: `make system-deps` installs them")
    with running_registry(tmp_path_factory.mktemp("registry")) as started:
        yield started


@contextmanager
def running_registry(root: Path) -> Iterator[Registry]:
    """A registry on a free loopback port, its files under ROOT (also for the benchmarks)."""
    serve, htpasswd = find_tool("docker-registry"), find_tool("htpasswd")
    assert serve is not None and htpasswd is not None
    user, password = "envkit-team", secrets.token_urlsafe(18)
    lines = subprocess.run(
        [htpasswd, "-Bbn", user, password], capture_output=True, text=True, check=True
    ).stdout
    (root / "htpasswd").write_text(lines)
    address = f"127.0.0.1:{free_port()}"
    (root / "config.yml").write_text(
        "version: 0.1\nlog:\n  level: warn\n"
        f"storage:\n  filesystem:\n    rootdirectory: {root / 'data'}\n"
        "  delete:\n    enabled: true\n"
        f"http:\n  addr: {address}\n  secret: {secrets.token_hex(16)}\n"
        f"auth:\n  htpasswd:\n    realm: envkit-test\n    path: {root / 'htpasswd'}\n"
    )
    log = (root / "registry.log").open("w")
    process = subprocess.Popen(
        [serve, "serve", str(root / "config.yml")], stdout=log, stderr=subprocess.STDOUT
    )
    try:
        deadline = time.monotonic() + 30
        while not _answers(address):
            assert process.poll() is None, (root / "registry.log").read_text()
            assert time.monotonic() < deadline, "the registry did not answer in 30 s"
            time.sleep(0.2)
        docker_config = root / "docker-config"
        docker_config.mkdir()
        login = subprocess.run(
            [
                "docker",
                "--config",
                str(docker_config),
                "login",
                "-u",
                user,
                "--password-stdin",
                address,
            ],
            input=password,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert login.returncode == 0, login.stderr
        yield Registry(address, user, password, docker_config)
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()
        for leftover in ("data",):  # the pushed layers: large, and the tests' alone
            subprocess.run(["rm", "-rf", str(root / leftover)], check=False)
