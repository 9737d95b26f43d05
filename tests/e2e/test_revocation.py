"""Access that stays revoked, played as the attack for real: a member plants their key where sshd
might still read it, is removed from envkit.yaml, and is refused afterwards; their open session
is ended by `envkit up`. Real OpenSSH logins against the container's real sshd."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import ENV_IMAGE, openssh
from tests.e2e.images import E2E_NAME, E2E_PORT, copy_project, docker, keypair
from tests.e2e.workers import port
from tests.helpers import envkit

pytestmark = [pytest.mark.docker, pytest.mark.slow]
PROJECT = "envkit-revoke"
PORT = port(19300)


def _config(base: str, members: dict[str, str], sudo: bool) -> str:
    text = base.replace(f"name: {E2E_NAME}", f"name: {PROJECT}")
    text = text.replace(f"port: {E2E_PORT}", f"port: {PORT}\n  sudo: {'true' if sudo else 'false'}")
    lines = ["team:\n  mode: shared\n  members:\n"]
    lines += [f"    - name: {name}\n      keys: ['{key}']\n" for name, key in members.items()]
    return text + "".join(lines)


@pytest.fixture
def shared_team(env_image: str, project_dir: Path, tmp_path: Path) -> Iterator[Path]:
    copy_project(project_dir, tmp_path)
    docker("tag", ENV_IMAGE, f"envkit/{PROJECT}:latest")
    yield tmp_path
    envkit("down", "--volumes", "--yes", cwd=tmp_path)
    docker("rmi", f"envkit/{PROJECT}:latest", check=False)


def _session_open(container: str) -> bool:
    listing = docker("exec", container, "sh", "-c", "cat /proc/[0-9]*/cmdline | tr '\\0' ' '")
    return "sshd: dev@" in listing.stdout


def test_a_removed_member_is_locked_out_and_their_session_ended(shared_team: Path) -> None:
    directory = shared_team
    config = directory / "envkit.yaml"
    base = config.read_text()
    keys = {name: keypair(directory, name) for name in ("alice", "bob")}
    config.write_text(_config(base, keys, sudo=False))
    up = envkit("up", cwd=directory)
    assert up.returncode == 0, up.stdout + up.stderr

    # alice, still a member, tries both ways back in: her key in ~/.ssh/authorized_keys, and an
    # extra line in the managed file (which she must not be able to write).
    managed = "/var/lib/envkit/keys/dev/authorized_keys"
    plant = openssh(
        PORT,
        directory / "alice",
        f"mkdir -p ~/.ssh && echo '{keys['alice']}' > ~/.ssh/authorized_keys"
        " && chmod 0600 ~/.ssh/authorized_keys && echo planted-home;"
        f" (echo '{keys['alice']}' >> {managed}) 2>/dev/null && echo WROTE-MANAGED;"
        f" (mv /var/lib/envkit/keys/dev /var/lib/envkit/keys/old) 2>/dev/null && echo MOVED;"
        f" stat -c '%U %a' {managed} /var/lib/envkit/keys/dev",
    )
    assert "planted-home" in plant.stdout, plant.stderr
    assert "WROTE-MANAGED" not in plant.stdout and "MOVED" not in plant.stdout
    assert plant.stdout.split()[-4:] == ["root", "644", "root", "755"]

    # an open session of hers, then the lead removes her and runs `envkit up`
    session = subprocess.Popen(
        ["ssh", "-p", str(PORT), "-i", str(directory / "alice"), "-o", "BatchMode=yes",
         "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
         "-o", "IdentitiesOnly=yes", "dev@127.0.0.1", "sleep 300"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while not _session_open(PROJECT) and time.monotonic() < deadline:
            time.sleep(0.3)
        assert _session_open(PROJECT), "alice's session never opened"
        config.write_text(_config(base, {"bob": keys["bob"]}, sudo=False))
        again = envkit("up", cwd=directory)
        assert again.returncode == 0, again.stdout + again.stderr
        assert "open SSH sessions of dev ended" in again.stdout, again.stdout
        assert session.wait(timeout=30) != 0, "her open session must end"
    finally:
        session.kill()
        session.wait()

    refused = openssh(PORT, directory / "alice", "true")
    assert refused.returncode == 255 and "Permission denied" in refused.stderr, refused.stderr
    assert openssh(PORT, directory / "bob", "whoami").stdout.strip() == "dev"


def test_doctor_warns_that_shared_sudo_cannot_promise_revocation(shared_team: Path) -> None:
    directory = shared_team
    config = directory / "envkit.yaml"
    key = keypair(directory, "carol")
    config.write_text(_config(config.read_text(), {"carol": key}, sudo=True))
    done = envkit("doctor", "--json", cwd=directory)
    findings = {f["check"]: f for f in __import__("json").loads(done.stdout)["findings"]}
    assert findings["access"]["status"] == "warn"
    assert "per-member" in findings["access"]["fix"]
    assert findings["exposure"]["status"] == "ok", "the e2e project publishes on 127.0.0.1"
