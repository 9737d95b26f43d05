"""A team's own project on the real engine: requirements files (with an include and a
constraints file), an apt list and build steps named in envkit.yaml, built on the CPU base;
the suite passes in the image and the image holds what the files name."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.images import copy_project, docker
from tests.helpers import REPO, envkit

pytestmark = [pytest.mark.docker, pytest.mark.slow]

BYO = REPO / "tests" / "data" / "projects" / "byo"
TAG = "envkit/envkit-byo:latest"


@pytest.fixture
def byo_project(env_image: str, project_dir: Path, tmp_path: Path) -> Iterator[Path]:
    config = copy_project(project_dir, tmp_path)
    shutil.copytree(BYO, tmp_path, dirs_exist_ok=True)
    text = config.read_text().replace("name: envkit-e2e", "name: envkit-byo")
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
