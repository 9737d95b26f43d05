"""`envkit doctor` against this machine's real engine and compose tool. This machine has no NVIDIA
driver, so the driver verdicts are checked with a fake `nvidia-smi` (named so in the tests) that
prints what a real one prints for `--query-gpu=driver_version,name --format=csv,noheader`."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.images import copy_project
from tests.helpers import EXAMPLES, envkit

pytestmark = [pytest.mark.docker]


def _doctor(cwd: Path, env: dict[str, str] | None = None) -> tuple[int, dict[str, Any], str]:
    done = envkit("doctor", "--json", cwd=cwd, env=env)
    assert "Traceback" not in done.stderr, done.stderr
    report = json.loads(done.stdout)
    return done.returncode, {f["check"]: f for f in report["findings"]}, done.stderr


def _example(tmp_path: Path, name: str) -> Path:
    shutil.copytree(EXAMPLES / name, tmp_path, dirs_exist_ok=True)
    return tmp_path / "envkit.yaml"


def _fake_nvidia_smi(tmp_path: Path, line: str) -> dict[str, str]:
    """A fake driver: there is no GPU on the machines these tests run on."""
    bin_dir = tmp_path / "fake-bin"
    bin_dir.mkdir(exist_ok=True)
    smi = bin_dir / "nvidia-smi"
    smi.write_text(f"#!/bin/sh\nprintf '%s\\n' '{line}' '{line}'\n")
    smi.chmod(0o755)
    return {"PATH": f"{bin_dir}:{os.environ['PATH']}"}


def test_host_without_gpus_and_without_config(tmp_path: Path) -> None:
    code, found, _ = _doctor(tmp_path)
    assert code == 0
    server = subprocess.run(
        ["docker", "version", "--format", "{{.Server.Version}}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert found["engine"]["status"] == "ok" and server in found["engine"]["message"]
    compose = found["compose"]
    assert compose["status"] == "ok" and ("v1" in compose["message"] or "v2" in compose["message"])
    assert found["driver"]["status"] == "info"
    assert "no NVIDIA driver on this host" in found["driver"]["message"]
    assert found["config"]["status"] == "warn"
    assert found["disk"]["status"] in ("ok", "warn") and "GB free" in found["disk"]["message"]
    assert found["builder"]["status"] == "ok", found["builder"]  # make test installs buildx
    assert "BuildKit; docker buildx: github.com/docker/buildx" in found["builder"]["message"]


def test_builder_finding_where_the_cli_has_no_buildx(tmp_path: Path) -> None:
    """The real doctor with a PATH that has no Docker CLI: `auto` warns (no cache mounts), and a
    config that insists on BuildKit fails with the fix."""
    empty = {"PATH": str(tmp_path / "bin")}
    _, found, _ = _doctor(tmp_path, env=empty)
    assert found["builder"]["status"] == "warn" and "no cache mounts" in found["builder"]["message"]
    config = _example(tmp_path, "debian-bookworm-cpu")
    config.write_text(config.read_text() + "build:\n  builder: buildkit\n")
    code, found, _ = _doctor(tmp_path, env=empty)
    assert code == 1 and found["builder"]["status"] == "fail"
    assert "docker-buildx" in found["builder"]["fix"]


def test_spec_that_asks_for_gpus_fails_plainly_without_a_driver(tmp_path: Path) -> None:
    _example(tmp_path, "pytorch-2-tuna")
    code, found, _ = _doctor(tmp_path)
    assert code == 1
    assert found["driver"]["status"] == "fail"
    assert "asks for GPUs" in found["driver"]["message"] and found["driver"]["fix"]
    assert found["nvidia-runtime"]["status"] == "fail"
    assert "nvidia-ctk runtime configure" in found["nvidia-runtime"]["fix"]
    plain = envkit("doctor", cwd=tmp_path)
    assert plain.returncode == 1 and "problem(s) to fix first" in plain.stdout


@pytest.mark.parametrize(
    ("driver", "status", "phrase"),
    [
        ("550.54.15", "ok", ">= 550.54.15, the minimum for CUDA 12.4"),
        ("535.104.05", "warn", "minor-version compatibility"),
        ("470.82.01", "fail", "older than 525.60.13"),
    ],
)
def test_fake_nvidia_smi_driver_against_image_cuda(
    tmp_path: Path, driver: str, status: str, phrase: str
) -> None:
    _example(tmp_path, "pytorch-2-tuna")  # CUDA 12.4: needs 550.54.15, 525.60.13 under compat
    env = _fake_nvidia_smi(tmp_path, f"{driver}, NVIDIA H100 80GB HBM3")
    _, found, _ = _doctor(tmp_path, env)
    verdict = found["driver"]
    assert verdict["status"] == status, verdict
    assert phrase in verdict["message"] and "2 GPU(s): NVIDIA H100 80GB HBM3" in verdict["message"]
    if status == "fail":
        assert "envkit compat" in verdict["fix"]


def test_engine_unreachable_is_a_finding_naming_the_socket(tmp_path: Path) -> None:
    code, found, _ = _doctor(tmp_path, {"DOCKER_HOST": "unix:///tmp/envkit-no-such.sock"})
    assert code == 1
    assert found["engine"]["status"] == "fail"
    assert "unix:///tmp/envkit-no-such.sock" in found["engine"]["message"]
    assert "start it" in found["engine"]["fix"]


def test_taken_port_and_invalid_config(tmp_path: Path) -> None:
    config = _example(tmp_path, "pytorch-2-tuna")
    with socket.socket() as holder:
        holder.bind(("0.0.0.0", 0))  # noqa: S104 - the config binds ssh on every address
        holder.listen()
        taken = holder.getsockname()[1]
        config.write_text(config.read_text().replace("port: 2222", f"port: {taken}"))
        _, found, _ = _doctor(tmp_path)
    assert found["ports"]["status"] == "fail"
    assert f"{taken} (ssh.port)" in found["ports"]["message"]

    config.write_text(config.read_text().replace("gpus: 2", "gpus: lots"))
    code, found, _ = _doctor(tmp_path)
    assert code == 1 and found["config"]["status"] == "fail"
    assert "runtime.gpus" in found["config"]["message"] and "lots" in found["config"]["message"]


def test_an_image_already_built_is_named_in_the_disk_finding(
    env_image: str, project_dir: Path, tmp_path: Path
) -> None:
    copy_project(project_dir, tmp_path)  # the e2e project, whose image the session built
    code, found, _ = _doctor(tmp_path)
    assert f"{env_image} is built" in found["disk"]["message"], found["disk"]
    assert found["config"]["status"] == "ok" and found["nvidia-runtime"]["status"] == "info"
    assert code == 0, "a CPU project on a host without GPUs has nothing to fix"
