"""Engines besides this machine's Docker, for the tests: Podman's Docker-compatible API service
(Debian's podman, its storage in a temp folder of its own, the test base image loaded from
Docker), and the same service reached as a remote engine over ssh:// through a real sshd on
loopback, whose authorized_keys line points `docker system dial-stdio` at Podman's socket.
Started per session, and stopped with everything they stored afterwards."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.e2e.images import BASE_IMAGE, ensure_base_image
from tests.helpers import find_tool, free_port


@dataclass(frozen=True)
class PodmanEngine:
    url: str  # unix:///…/podman.sock
    storage: tuple[str, ...]  # podman's flags for this engine's own storage

    def podman(self, *args: str, check: bool = False) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["podman", *self.storage, *args],
            capture_output=True, text=True, timeout=300, check=check,
        )  # fmt: skip


@dataclass(frozen=True)
class SshEngine:
    url: str  # ssh://root@127.0.0.1:PORT
    bin_dir: Path  # an `ssh` that uses the test's own client configuration

    def env(self) -> dict[str, str]:
        return {"DOCKER_HOST": self.url, "PATH": f"{self.bin_dir}:{os.environ['PATH']}"}


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _wait_for(what: str, ready: object, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 60
    while not ready():  # type: ignore[operator]
        assert process.poll() is None, f"{what} exited: {log.read_text()[-2000:]}"
        assert time.monotonic() < deadline, f"{what} did not answer in 60 s"
        time.sleep(0.2)


def _unmount_under(root: Path) -> None:
    """Podman's storage leaves its overlay folder mounted on itself after the service stops; a
    mount left under the test's temp folder would make pytest's clean-up fail later."""
    mounts = [line.split()[1] for line in Path("/proc/self/mounts").read_text().splitlines()]
    for mount in sorted((m for m in mounts if m.startswith(f"{root}/")), reverse=True):
        done = subprocess.run(["umount", mount], capture_output=True, check=False)
        if done.returncode != 0:
            subprocess.run(["umount", "-l", mount], capture_output=True, check=False)
    left = [m for m in Path("/proc/self/mounts").read_text().split() if m.startswith(f"{root}/")]
    assert not left, f"still mounted: {left}"


# Podman's storage lives outside pytest's temp tree: a run killed before its teardown leaves the
# overlay mounted, and pytest's clean-up of old temp folders in a later run then fails on it.
# Each run's folder is named by its pid, so a later run unmounts and removes those whose run died.
PODMAN_ROOTS = Path("/tmp/envkit-test-podman")


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _sweep_dead_roots() -> None:
    if not PODMAN_ROOTS.is_dir():
        return
    for root in PODMAN_ROOTS.iterdir():
        owner = root.name.split("-", 1)[0]
        if owner.isdigit() and not _pid_alive(int(owner)):
            _unmount_under(root)
            shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def podman_engine() -> Iterator[PodmanEngine]:
    if find_tool("podman") is None or not Path("/usr/libexec/podman/catatonit").is_file():
        pytest.fail("podman and catatonit are missing: `make system-deps` installs them")
    _sweep_dead_roots()
    root = PODMAN_ROOTS / f"{os.getpid()}-{time.monotonic_ns()}"
    root.mkdir(parents=True)
    with running_podman(root) as engine:
        yield engine


@contextmanager
def running_podman(root: Path, insecure_registry: str | None = None) -> Iterator[PodmanEngine]:
    """Podman's API service with its storage under ROOT and the test base image loaded; where
    INSECURE_REGISTRY (HOST:PORT) is given, Podman may pull from it over plain HTTP."""
    import docker

    ensure_base_image()
    storage = ("--root", str(root / "storage"), "--runroot", str(root / "run"))
    url = f"unix://{root / 'podman.sock'}"
    log = root / "service.log"
    env = dict(os.environ)
    if insecure_registry:
        conf = root / "registries.conf"
        conf.write_text(f'[[registry]]\nlocation = "{insecure_registry}"\ninsecure = true\n')
        env["CONTAINERS_REGISTRIES_CONF"] = str(conf)
    with log.open("w") as out:
        service = subprocess.Popen(
            ["podman", *storage, "system", "service", "--time=0", url],
            stdout=out, stderr=subprocess.STDOUT, env=env,
        )  # fmt: skip

    def answers() -> bool:
        if not (root / "podman.sock").exists():  # the SDK leaks a socket on a failed connect
            return False
        client = docker.DockerClient(base_url=url, version="1.41", timeout=5)  # no probe call
        try:
            return bool(client.ping())
        except Exception:  # not up yet
            return False
        finally:
            client.close()

    engine = PodmanEngine(url, storage)
    try:
        _wait_for("podman system service", answers, service, log)
        saved = subprocess.Popen(["docker", "save", BASE_IMAGE], stdout=subprocess.PIPE)
        loaded = subprocess.run(
            ["podman", *storage, "load"], stdin=saved.stdout, capture_output=True, timeout=600,
            check=False,
        )  # fmt: skip
        saved.wait(timeout=60)
        assert saved.stdout is not None
        saved.stdout.close()
        assert loaded.returncode == 0, loaded.stderr
        yield engine
    finally:
        engine.podman("rm", "--all", "--force")
        _stop(service)
        engine.podman("system", "reset", "--force")
        _unmount_under(root)
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def ssh_engine(
    podman_engine: PodmanEngine, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SshEngine]:
    sshd = shutil.which("sshd", path=f"/usr/sbin:/usr/local/sbin:{os.environ['PATH']}")
    if sshd is None:
        pytest.fail("sshd is missing: `make system-deps` installs openssh-server")
    root = tmp_path_factory.mktemp("ssh-engine")
    for key in ("host_key", "client_key"):
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(root / key)], check=True
        )
    # The engine's side: whoever logs in with the client key talks to Podman's socket.
    (root / "authorized_keys").write_text(
        f'environment="DOCKER_HOST={podman_engine.url}" ' + (root / "client_key.pub").read_text()
    )
    (root / "authorized_keys").chmod(0o600)
    port = free_port()
    (root / "sshd_config").write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {root / 'host_key'}\n"
        f"AuthorizedKeysFile {root / 'authorized_keys'}\nPermitUserEnvironment DOCKER_HOST\n"
        "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n"
        f"StrictModes no\nPidFile {root / 'sshd.pid'}\nPermitRootLogin prohibit-password\n"
    )
    # The client's side: the docker SDK runs plain `ssh`; this one reads the test's config.
    (root / "ssh_config").write_text(
        f"Host *\n  IdentityFile {root / 'client_key'}\n  IdentitiesOnly yes\n"
        f"  UserKnownHostsFile {root / 'known_hosts'}\n  StrictHostKeyChecking accept-new\n"
        "  BatchMode yes\n"
    )
    bin_dir = root / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "ssh"
    wrapper.write_text(f'#!/bin/sh\nexec {shutil.which("ssh")} -F {root / "ssh_config"} "$@"\n')
    wrapper.chmod(0o755)
    Path("/run/sshd").mkdir(exist_ok=True)  # sshd's privilege-separation folder
    log = root / "sshd.log"
    with log.open("w") as out:
        daemon = subprocess.Popen(
            [sshd, "-D", "-e", "-f", str(root / "sshd_config")],
            stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    user = os.environ.get("USER") or "root"
    engine = SshEngine(f"ssh://{user}@127.0.0.1:{port}", bin_dir)

    def answers() -> bool:
        done = subprocess.run(
            [str(wrapper), "-p", str(port), f"{user}@127.0.0.1", "docker", "version"],
            capture_output=True, text=True, timeout=30, check=False,
        )  # fmt: skip
        return done.returncode == 0 and "Podman" in done.stdout

    try:
        _wait_for("sshd in front of Podman", answers, daemon, log)
        yield engine
    finally:
        _stop(daemon)
