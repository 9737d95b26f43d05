"""The suite inside real containers built from envkit's templates: healthy gives zero failures;
planted container breakages (tiny /dev/shm, password logins, a different mirror) fail their
checks. Targets: docker:// (exec), ssh:// (a real sshd), and a throwaway --image."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.e2e.conftest import StartContainer, ssh_port
from tests.e2e.images import docker
from tests.helpers import statuses, verify_report

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def test_healthy_container_has_zero_failures(
    env_image: str, start_container: StartContainer, project_dir: Path
) -> None:
    name = start_container(env_image)
    code, report = verify_report(project_dir, "--target", f"docker://{name}")
    got = statuses(report)
    assert code == 0, {k: v for k, v in got.items() if v not in ("pass", "skip")}
    assert got["system.sshd"] == "pass" and got["system.mirrors"] == "pass"
    assert got["multigpu.ddp"] == "pass" and got["system.dataloader_workers"] == "pass"
    assert report["targets"][0]["environment"]["torch"].startswith("1.13")


def test_tiny_shm_fails_shm_and_dataloader(
    env_image: str, start_container: StartContainer, project_dir: Path
) -> None:
    name = start_container(env_image, shm="1m")
    code, report = verify_report(project_dir, "--target", f"docker://{name}", "--only", "system")
    got = statuses(report)
    assert code == 1
    assert got["system.shm"] == "fail" and got["system.dataloader_workers"] == "fail"


def test_password_login_planted_fails_sshd(
    env_image: str, start_container: StartContainer, project_dir: Path
) -> None:
    name = start_container(env_image)
    docker(
        "exec",
        name,
        "sh",
        "-c",
        "echo 'PasswordAuthentication yes' > /etc/ssh/sshd_config.d/0-planted.conf",
    )
    code, report = verify_report(
        project_dir, "--target", f"docker://{name}", "--only", "system.sshd"
    )
    assert code == 1 and statuses(report)["system.sshd"] == "fail"


def test_mirror_not_in_effect_fails_mirrors(
    env_image: str, start_container: StartContainer, project_dir: Path
) -> None:
    name = start_container(env_image)
    other = project_dir / "tuna.yaml"  # beside envkit.yaml, so its relative paths still resolve
    other.write_text(
        (project_dir / "envkit.yaml").read_text().replace("preset: official", "preset: tuna")
    )
    code, report = verify_report(
        project_dir, "--target", f"docker://{name}", "--only", "system.mirrors", config=other
    )
    check = report["targets"][0]["checks"][0]
    assert code == 1 and check["status"] == "fail"
    assert "pypi.tuna.tsinghua.edu.cn" in check["message"]


def test_ssh_target_runs_the_same_suite(
    env_image: str, start_container: StartContainer, project_dir: Path
) -> None:
    name = start_container(env_image, publish_ssh=True)
    known = project_dir / f"known_hosts_{name}"
    url = (
        f"ssh://dev@127.0.0.1:{ssh_port(name)}?identity={project_dir / 'id_test'}"
        f"&known_hosts={known}"
    )
    code, report = verify_report(project_dir, "--target", url, "--skip", "bench")
    got = statuses(report)
    assert code == 0, {k: v for k, v in got.items() if v not in ("pass", "skip")}
    assert got["tensor.creation"] == "pass" and got["system.sshd"] == "pass"
    # the host key was recorded (accept-new), hashed or not as the client's ssh_config says
    recorded = subprocess.run(
        ["ssh-keygen", "-F", f"[127.0.0.1]:{ssh_port(name)}", "-f", str(known)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert recorded.returncode == 0 and "ssh-ed25519" in recorded.stdout, recorded.stdout


def test_throwaway_image_target_leaves_nothing(env_image: str, project_dir: Path) -> None:
    code, report = verify_report(project_dir, "--image", env_image, "--only", "tensor")
    assert code == 0 and report["targets"][0]["target"] == f"image://{env_image}"
    # The throwaway carries io.envkit.verify=<run id>; this worker's image is its own, so another
    # worker's throwaways (of its own image) are not counted here.
    left = docker(
        "ps", "-aq", "--filter", "label=io.envkit.verify", "--filter", f"ancestor={env_image}"
    ).stdout.strip()
    assert left == ""


def test_unreachable_target_exits_3(project_dir: Path) -> None:
    code, report = verify_report(project_dir, "--target", "docker://no-such-container-envkit")
    assert code == 3 and report["unreachable"][0]["target"] == "docker://no-such-container-envkit"
