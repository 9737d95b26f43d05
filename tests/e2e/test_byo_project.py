"""A team's own project on the real engine: requirements files (with an include and a
constraints file), an apt list and build steps named in envkit.yaml, built on the CPU base;
the suite passes in the image and the image holds what the files name."""

from __future__ import annotations

import json
import secrets
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import openssh
from tests.e2e.images import E2E_NAME, E2E_PORT, copy_project, docker
from tests.e2e.mirrors import PROBE, Recorder, private_index
from tests.e2e.workers import port
from tests.helpers import REPO, envkit

pytestmark = [pytest.mark.docker, pytest.mark.slow]

BYO = REPO / "tests" / "data" / "projects" / "byo"
TAG = "envkit/envkit-byo:latest"


@pytest.fixture
def byo_project(env_image: str, project_dir: Path, tmp_path: Path) -> Iterator[Path]:
    config = copy_project(project_dir, tmp_path)
    shutil.copytree(BYO, tmp_path, dirs_exist_ok=True)
    text = config.read_text().replace(f"name: {E2E_NAME}", "name: envkit-byo")
    text = text.replace(
        "  pip: [tqdm]\n", "  requirements: [requirements.txt]\n  apt_file: apt.txt\n"
    )
    config.write_text(
        text
        + "build:\n  steps:\n"
        + "    - run: mkdir -p /opt/team && echo ready > /opt/team/ready\n      after: system\n"
        + '    - run: echo "built by $(id -u)" > /tmp/step-marker\n      user: login\n'
    )
    yield tmp_path
    docker("rmi", "-f", TAG, check=False)


def test_a_projects_own_files_and_steps_build_and_verify(byo_project: Path) -> None:
    built = envkit("build", cwd=byo_project)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    shown = docker(
        "run", "--rm", "--entrypoint", "/bin/bash", TAG, "-c",
        "python -c 'import six, tqdm; print(six.__version__)'"
        " && dpkg-query -W -f='${Status}\\n' tree && cat /opt/team/ready /tmp/step-marker",
    ).stdout.split("\n")  # fmt: skip
    assert shown[:4] == ["1.16.0", "install ok installed", "ready", "built by 1000"], shown
    verified = envkit("verify", "--image", TAG, "--no-bench", cwd=byo_project)
    assert verified.returncode == 0, verified.stdout[-3000:] + verified.stderr[-2000:]

    # A changed requirements file rebuilds from its own layer: the apt list is not re-run.
    (byo_project / "requirements.txt").write_text(
        (byo_project / "requirements.txt").read_text() + "idna\n"
    )
    again = envkit("build", "--verbose", cwd=byo_project)
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-2000:]
    assert "tree" not in again.stdout.split("requirements.txt", 1)[0].split("CACHED")[-1]
    _lock_rebuild_and_open_the_box(byo_project)


def _lock_rebuild_and_open_the_box(project: Path) -> None:
    """The requirements project's lock round trip (lock -> build --locked -> diff, all exit 0),
    then the box: its workspace is the project folder, what the login user writes there is
    theirs on the host, and the project's own package imports over SSH."""
    locked = envkit("lock", cwd=project)
    assert locked.returncode == 0, locked.stdout + locked.stderr
    lock_text = (project / "envkit.lock").read_text()
    assert "requirements:requirements.txt@" in lock_text, "the requirements file is requested"
    rebuilt = envkit("build", "--locked", "--quiet", cwd=project)
    assert rebuilt.returncode == 0, rebuilt.stdout[-3000:] + rebuilt.stderr[-3000:]
    diffed = envkit("diff", "envkit.lock", f"image://{TAG}", cwd=project)
    assert diffed.returncode == 0, diffed.stdout[-3000:] + diffed.stderr[-2000:]
    config = project / "envkit.yaml"
    config.write_text(config.read_text().replace(f"port: {E2E_PORT}", f"port: {port(18846)}"))
    # The member's own files: the config's login user (ssh.uid 1000) is the member here, as
    # ssh.uid defaults to the invoking user's UID on a member's machine.
    subprocess.run(["chown", "-R", "1000:1000", str(project)], check=True)
    try:
        up = envkit("up", cwd=project)
        assert up.returncode == 0, up.stdout[-3000:] + up.stderr[-2000:]
        inside = openssh(
            port(18846),
            project / "id_test",
            "cd /workspace && stat -c %U requirements.txt byo_pkg/__init__.py"
            " && python -c 'import byo_pkg; print(byo_pkg.GREETING)'"
            " && echo mine > made-in-the-box.txt && id -u",
        )
        assert inside.returncode == 0, inside.stdout + inside.stderr
        assert inside.stdout.split()[:2] == ["dev", "dev"], "the project's files, the login user's"
        assert "hello from the workspace" in inside.stdout, inside.stdout
        made = project / "made-in-the-box.txt"
        assert made.read_text() == "mine\n", "the workspace is the project folder itself"
        assert made.stat().st_uid == int(inside.stdout.split()[-1]) == 1000
    finally:
        envkit("down", "--volumes", "--yes", cwd=project)


def test_a_failing_build_step_is_named_with_its_last_lines(byo_project: Path) -> None:
    config = byo_project / "envkit.yaml"
    config.write_text(
        config.read_text().replace("echo ready > /opt/team/ready", "echo step-was-here; false")
    )
    failed = envkit("build", cwd=byo_project)
    assert failed.returncode != 0
    said = failed.stdout + failed.stderr
    # named by its command, with its last lines
    assert "failed at step" in said and "echo step-was-here; false" in said, said[-3000:]
    assert "| step-was-here" in said, said[-3000:]


UVPROJ = REPO / "tests" / "data" / "projects" / "uvproj"


def test_a_uv_lock_is_installed_exactly(env_image: str, project_dir: Path, tmp_path: Path) -> None:
    """python.project with a uv.lock: the image holds the lock's versions (tqdm 4.70.1, not the
    newest release tqdm>=4.60 admits), the extra's package, and the suite passes in it."""
    config = copy_project(project_dir, tmp_path)
    shutil.copytree(UVPROJ, tmp_path, dirs_exist_ok=True)
    text = config.read_text().replace(f"name: {E2E_NAME}", "name: envkit-byo")
    text = text.replace("  pip: [tqdm]\n", "")
    config.write_text(text + "python:\n  project: .\n  extras: [colour]\n")
    try:
        built = envkit("build", cwd=tmp_path)
        assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
        shown = docker(
            "run", "--rm", "--entrypoint", "python", TAG, "-c",
            "import tqdm, colorama; print(tqdm.__version__, tqdm.__file__.startswith('/opt/venv/'),"
            " colorama.__version__)",
        ).stdout.split()  # fmt: skip
        assert shown == ["4.70.1", "True", "0.4.6"], shown
        verified = envkit("verify", "--image", TAG, "--no-bench", cwd=tmp_path)
        assert verified.returncode == 0, verified.stdout[-3000:] + verified.stderr[-2000:]
    finally:
        docker("rmi", "-f", TAG, check=False)


def test_a_private_index_gets_the_netrc_as_a_secret_that_no_layer_keeps(
    env_image: str, project_dir: Path, tmp_path: Path
) -> None:
    """A package from a private index behind basic auth: the build reads the credentials from
    $ENVKIT_NETRC through BuildKit's secret mount and succeeds; the password is nowhere in the
    image (layers, history, /root/.netrc). Without the netrc the index refuses (401) and the
    build fails at that package's step."""
    password = secrets.token_hex(16)
    netrc = tmp_path / "netrc"
    netrc.write_text(f"machine 127.0.0.1 login envkit password {password}\n")
    config = copy_project(project_dir, tmp_path)
    seen = Recorder()
    with private_index(seen, "envkit", password) as url:
        text = config.read_text().replace(f"name: {E2E_NAME}", "name: envkit-byo")
        text = text.replace(
            "  pip: [tqdm]\n", f"  pip:\n    - {{name: envkit-probe, index: '{url}/simple'}}\n"
        )
        text = text.replace(
            "  preset: official\n", "  preset: official\n  trusted_hosts: [127.0.0.1]\n"
        )
        text = text.replace("runtime:\n", "runtime:\n  build_network: host\n")
        config.write_text(text)
        try:
            empty_home = tmp_path / "home"
            empty_home.mkdir()
            refused = envkit(
                "build", "--builder", "buildkit", cwd=tmp_path, env={"HOME": str(empty_home)}
            )
            assert refused.returncode != 0
            assert "envkit-probe" in refused.stdout + refused.stderr
            assert any(p.startswith("401 ") for p in seen.paths), seen.paths

            built = envkit(
                "build", "--builder", "buildkit", cwd=tmp_path, env={"ENVKIT_NETRC": str(netrc)}
            )
            assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
            assert f"/packages/{PROBE}" in seen.paths, seen.paths
            served = docker(
                "run", "--rm", "--entrypoint", "sh", TAG, "-c",
                "python -c 'import envkit_probe as p; print(p.SERVED_BY)';"
                " ls /root/.netrc 2>&1; true",
            ).stdout  # fmt: skip
            assert "envkit-test-index" in served and "No such file" in served, served
            history = docker("history", "--no-trunc", TAG).stdout
            assert "/simple" in history and password not in history
            saved = subprocess.run(["docker", "save", TAG], capture_output=True, check=True).stdout
            assert password.encode() not in saved, "the password is in a layer"
        finally:
            docker("rmi", "-f", TAG, check=False)


def test_a_project_without_torch_builds_and_verifies_with_the_torch_checks_skipped(
    env_image: str, project_dir: Path, tmp_path: Path
) -> None:
    """torch: none (a TensorFlow or JAX project) on a CPU base: the build installs no torch and
    the project's step takes the base's away; verify exits 0, torch's checks skipped saying
    why, the system checks run on the image's Python."""
    config = copy_project(project_dir, tmp_path)
    text = config.read_text().replace(f"name: {E2E_NAME}", "name: envkit-byo")
    text = text.replace("python3-torch, python3-numpy, ", "")
    config.write_text(
        text
        + "torch: none\n"
        + "build:\n  steps:\n    - run: apt-get purge -y -q python3-torch\n      after: system\n"
    )
    try:
        built = envkit("build", "--quiet", cwd=tmp_path)
        assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
        gone = docker(
            "run", "--rm", "--entrypoint", "python", TAG, "-c", "import torch", check=False
        )
        assert gone.returncode != 0 and "No module named 'torch'" in gone.stderr
        report = tmp_path / "report.json"
        verified = envkit(
            "verify", "--image", TAG, "--no-bench", "--json-file", str(report), cwd=tmp_path
        )
        assert verified.returncode == 0, verified.stdout[-3000:] + verified.stderr[-2000:]
        checks = {c["id"]: c for c in json.loads(report.read_text())["targets"][0]["checks"]}
        assert checks["autograd.seed_examples"]["status"] == "skip"
        assert "torch: none" in checks["autograd.seed_examples"]["message"]
        assert checks["system.shm"]["status"] == "pass"
        assert checks["system.sshd"]["status"] == "pass"
    finally:
        docker("rmi", "-f", TAG, check=False)
