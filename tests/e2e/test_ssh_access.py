"""SSH into containers built from envkit's templates, with real clients against the real sshd:
keys work, passwords and root do not, ssh-audit finds nothing at fail level, every container has
its own host keys, SSH sessions see what `docker exec` sees, the login user has the configured
UID/GID (also where the base image already uses UID 1000), and no key material is in any layer."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import tarfile
from pathlib import Path

import paramiko
import pytest

from tests.e2e.conftest import ENV_IMAGE, StartContainer, openssh, ssh_port
from tests.e2e.images import BASE_IMAGE, TEST_LABEL, docker
from tests.helpers import find_tool

pytestmark = [pytest.mark.docker, pytest.mark.slow]
PEM_PRIVATE = re.compile(rb"-----BEGIN [A-Z ]*PRIVATE KEY-----\r?\n[A-Za-z0-9+/=]{40}")


def test_key_login_with_openssh(
    env_image: str, start_container: StartContainer, project_dir: Path
) -> None:
    port = ssh_port(start_container(env_image, publish_ssh=True))
    done = openssh(port, project_dir / "id_test", "id -un; id -u")
    assert done.returncode == 0 and done.stdout.split() == ["dev", "1000"], done.stderr


def test_passwords_root_and_classical_key_exchange_are_refused(
    env_image: str, start_container: StartContainer, project_dir: Path
) -> None:
    port = ssh_port(start_container(env_image, publish_ssh=True))
    password = subprocess.run(
        ["ssh", "-p", str(port), "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=no",
         "-o", "UserKnownHostsFile=/dev/null", "-o", "PubkeyAuthentication=no",
         "-o", "PreferredAuthentications=password,keyboard-interactive", "dev@127.0.0.1", "true"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert password.returncode == 255
    assert "Permission denied (publickey)" in password.stderr, "only public keys may be offered"
    denied = openssh(port, project_dir / "id_test", "true", user="root")
    assert denied.returncode == 255 and "Permission denied" in denied.stderr
    # A client without a post-quantum key exchange (paramiko's) finds none in common.
    transport = paramiko.Transport(("127.0.0.1", port))
    with pytest.raises(paramiko.SSHException, match="kex"):
        transport.start_client(timeout=20)
    transport.close()


def test_sshd_reads_keys_only_from_the_managed_file_and_forwarding_follows_config(
    env_image: str, start_container: StartContainer
) -> None:
    name = start_container(env_image)
    effective = docker("exec", name, "/usr/sbin/sshd", "-T").stdout.lower().splitlines()
    settings = dict(line.split(" ", 1) for line in effective if " " in line)
    assert settings["authorizedkeysfile"] == "/var/lib/envkit/keys/%u/authorized_keys"
    assert settings["allowtcpforwarding"] == "yes" and settings["allowagentforwarding"] == "no"
    assert settings["allowstreamlocalforwarding"] == "no"
    assert settings["persourcemaxstartups"] == "4" and settings["maxstartups"] == "10:30:60"
    assert all("sntrup761" in kex or "mlkem" in kex for kex in settings["kexalgorithms"].split(","))


def test_ssh_audit_finds_no_fail_and_no_avoidable_warning(
    env_image: str, start_container: StartContainer
) -> None:
    port = ssh_port(start_container(env_image, publish_ssh=True))
    audit = find_tool("ssh-audit")
    assert audit, "ssh-audit is a dev dependency"
    done = subprocess.run(
        [audit, "-j", "-p", str(port), "127.0.0.1"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    report = json.loads(done.stdout)
    fails = [
        item
        for section in ("kex", "key", "enc", "mac")
        for item in report.get(section, [])
        if item.get("notes", {}).get("fail")
    ]
    assert not fails, fails
    # Nor a warning this OpenSSH could avoid: it has post-quantum hybrid key exchange.
    warns = [
        item
        for section in ("kex", "enc", "mac")
        for item in report.get(section, [])
        if item.get("notes", {}).get("warn")
    ]
    assert not warns, warns
    assert report["banner"]["software"].startswith("OpenSSH")


def test_two_containers_have_different_host_keys(
    env_image: str, start_container: StartContainer
) -> None:
    keys = []
    for _ in range(2):
        port = ssh_port(start_container(env_image, publish_ssh=True))
        scan = subprocess.run(
            ["ssh-keyscan", "-t", "ed25519", "-p", str(port), "127.0.0.1"],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        keys.append(scan.stdout.split()[-1])
    assert keys[0] != keys[1], "host keys must be made per container, never baked into the image"


def test_ssh_session_sees_what_docker_exec_sees(
    env_image: str, start_container: StartContainer, project_dir: Path
) -> None:
    name = start_container(env_image, publish_ssh=True)
    port = ssh_port(name)
    probe = "echo $PATH; command -v python; python -c 'import torch; print(torch.__version__)'"
    via_exec = docker("exec", "-u", "dev", name, "sh", "-c", probe).stdout.split()
    login = openssh(port, project_dir / "id_test", f'bash -lc "{probe}"').stdout.split()
    plain = openssh(port, project_dir / "id_test", probe).stdout.split()
    assert login == via_exec, (login, via_exec)
    assert plain == via_exec, (plain, via_exec)
    assert via_exec[1] == "/opt/venv/bin/python"


def test_uid_gid_match_and_bind_mount_files_belong_to_the_host_user(
    env_image: str, project_dir: Path, tmp_path: Path
) -> None:
    shared = tmp_path / "work"
    shared.mkdir()
    os.chown(shared, 1234, 1234)  # the host user these tests stand in for
    name = f"envkit-test-uid-{os.getpid()}"
    docker(
        "run",
        "-d",
        "--name",
        name,
        "--label",
        f"{TEST_LABEL}=container",
        "-e",
        "ENVKIT_USER=alice",
        "-e",
        "ENVKIT_UID=1234",
        "-e",
        "ENVKIT_GID=1234",
        "-v",
        f"{shared}:/work",
        env_image,
    )
    try:
        _wait_for_user(name, "alice")
        ids = docker("exec", name, "id", "alice").stdout
        assert "uid=1234(alice)" in ids and "gid=1234" in ids
        docker("exec", "-u", "alice", name, "sh", "-c", "echo hi > /work/made-in-container")
        made = (shared / "made-in-container").stat()
        assert (made.st_uid, made.st_gid) == (1234, 1234)
    finally:
        docker("rm", "-f", name, check=False)


def test_existing_uid_1000_in_the_base_is_handled(env_image: str, tmp_path: Path) -> None:
    # Ubuntu 24.04 ships user 'ubuntu' with UID 1000; the entrypoint must still give dev UID 1000.
    (tmp_path / "Dockerfile").write_text(f"FROM {env_image}\nRUN useradd -m -u 1000 -U ubuntu\n")
    tag = "envkit-test/uid1000:latest"
    docker("build", "--label", f"{TEST_LABEL}=e2e", "-t", tag, str(tmp_path))
    name = f"envkit-test-ubuntu-{os.getpid()}"
    try:
        docker(
            "run",
            "-d",
            "--name",
            name,
            "--label",
            f"{TEST_LABEL}=container",
            "-e",
            "ENVKIT_USER=dev",
            "-e",
            "ENVKIT_UID=1000",
            "-e",
            "ENVKIT_GID=1000",
            tag,
        )
        _wait_for_user(name, "dev")
        assert docker("exec", name, "id", "-u", "dev").stdout.strip() == "1000"
        assert (
            docker("exec", name, "sh", "-c", "getent passwd 1000 | cut -d: -f1").stdout.strip()
            == "dev"
        )
    finally:
        docker("rm", "-f", name, check=False)
        docker("rmi", "-f", tag, check=False)


def _wait_for_user(name: str, user: str) -> None:
    for _ in range(60):
        if docker("exec", name, "id", user, check=False).returncode == 0:
            return
        subprocess.run(["sleep", "0.5"], check=True)
    raise AssertionError(docker("logs", name, check=False).stderr[-1000:])


def _layers(saved: bytes) -> list[tuple[str, bytes]]:
    with tarfile.open(fileobj=io.BytesIO(saved)) as image:
        manifest_file = image.extractfile("manifest.json")
        assert manifest_file is not None
        manifest = json.loads(manifest_file.read())[0]
        layers = []
        for path in manifest["Layers"]:  # bottom (the base image's) first
            handle = image.extractfile(path)
            assert handle is not None
            layers.append((path, handle.read()))
    return layers


def _base_layer_count() -> int:
    layers = docker("image", "inspect", "-f", "{{json .RootFS.Layers}}", BASE_IMAGE).stdout
    return len(json.loads(layers))


def test_no_key_material_in_any_layer(env_image: str, project_dir: Path) -> None:
    saved = subprocess.run(
        ["docker", "save", ENV_IMAGE], capture_output=True, check=True, timeout=600
    ).stdout
    public_key = (project_dir / "id_test.pub").read_text().split()[1].encode()
    base_layers = _base_layer_count()
    offenders = []
    for index, (path, data) in enumerate(_layers(saved)):
        added_by_envkit = index >= base_layers
        with tarfile.open(fileobj=io.BytesIO(data)) as layer:
            for entry in layer.getmembers():
                base = entry.name.rsplit("/", 1)[-1]
                if base.startswith("ssh_host_") or base == "authorized_keys":
                    offenders.append(f"{path}: {entry.name}")  # in no layer, the base's included
                if not entry.isfile() or entry.size > 1 << 20:
                    continue
                handle = layer.extractfile(entry)
                blob = handle.read() if handle else b""
                if public_key in blob or (added_by_envkit and PEM_PRIVATE.search(blob)):
                    offenders.append(f"{path}: {entry.name}")
    assert not offenders, offenders
    history = docker("history", "--no-trunc", ENV_IMAGE).stdout
    assert public_key.decode() not in history and "authorized_keys " not in history.replace(
        "/run/envkit/authorized_keys", ""
    )
