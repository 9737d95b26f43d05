"""A team's own dependency files (issue 29): what render makes of requirements files (includes,
constraints and hashes kept, a layer each), an apt list, an environment.yml and build steps;
and every way such a file is refused, with the line that named it or the file's own line."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.helpers import REPO, envkit, render_refused

BYO = REPO / "tests" / "data" / "projects" / "byo"
CONFIG = (
    "name: byo\nbase:\n  flavor: custom\n  image: debian:bookworm\ncuda: cpu\n"
    "ssh:\n  allow_no_keys: true\n  uid: 1000\n  gid: 1000\n"
    "packages:\n  requirements: [{requirements}]\n  apt_file: apt.txt\n"
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copytree(BYO, tmp_path / "byo")
    return tmp_path / "byo"


def _config(project: Path, extra: str = "", requirements: str = "requirements.txt") -> None:
    (project / "envkit.yaml").write_text(CONFIG.format(requirements=requirements) + extra)


def test_the_files_travel_into_the_context_and_each_gets_its_layer(project: Path) -> None:
    hashed = "six==1.16.0 --hash=sha256:" + "8a" * 32 + "\n"
    (project / "reqs" / "base.txt").write_text(hashed)
    _config(
        project,
        "conda:\n  file: environment.yml\nbuild:\n  steps:\n"
        "    - run: 'echo \"$HOME\" > /x; cat <<EOF\n\n      EOF'\n      after: system\n",
    )
    assert envkit("render", cwd=project).returncode == 0
    context = project / ".envkit"
    copied = context / "envkit" / "project"
    assert (copied / "reqs" / "base.txt").read_text() == hashed, "hashes kept as written"
    assert (copied / "constraints.txt").is_file() and (copied / "requirements.txt").is_file()
    dockerfile = (context / "Dockerfile").read_text()
    assert "-r /opt/envkit/project/requirements.txt" in dockerfile
    assert "      tree" in dockerfile, "apt.txt's packages join packages.apt's layer"
    # the step is one JSON string: its quotes, $ and newline cannot leave it
    assert 'RUN ["/bin/bash", "-o", "pipefail", "-c", "echo \\"$HOME\\" > /x; cat <<EOF\\n' in (
        dockerfile
    )
    environment = (context / "environment.yml").read_text()
    assert "numpy=1.26" in environment and "rich==13.7.1" in environment


@pytest.mark.parametrize(
    ("where", "text", "said"),
    [
        ("reqs/base.txt", "numpy>=1 ; python_version >= '3.8' and\n", "reqs/base.txt:1: not a"),
        ("requirements.txt", "-r reqs/base.txt\n--index-url http://x\n", "requirements.txt:2:"),
        ("requirements.txt", "numpy -C x=y\n", "-C on a requirement's line: a build setting"),
        ("requirements.txt", "-r ../../outside.txt\n", "leaves the project"),
        ("apt.txt", "tree\nnot_a;package\n", "apt.txt:2:"),
        ("environment.yml", "dependencies:\n  - numpy\n  - numpy;rm\n", "environment.yml:3:"),
    ],
)
def test_what_a_file_holds_is_checked_with_its_own_line(
    project: Path, where: str, text: str, said: str
) -> None:
    (project / where).write_text(text)
    _config(project, "conda:\n  file: environment.yml\n")
    stderr = render_refused(project)
    assert said in stderr, stderr


def test_an_option_pip_ignores_on_a_requirements_line_is_said_and_the_file_kept(
    project: Path,
) -> None:
    """pip ignores --no-binary (any option but a build setting) on a requirement's line
    (OpenMMLab's `albumentations>=0.3.2 --no-binary qudida,albumentations`): the build does
    too, the line's requirement and hashes kept, said at its line; the file is not lost."""
    digest = "a" * 64
    (project / "requirements.txt").write_text(
        f"six\nalbumentations>=0.3.2 --no-binary qudida,albumentations --hash=sha256:{digest}\n"
    )
    _config(project)
    done = envkit("render", cwd=project)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (
        "requirements.txt:2: --no-binary qudida,albumentations: pip ignores an option on a "
        "requirement's line" in done.stdout + done.stderr
    ), done
    copied = (project / ".envkit" / "envkit" / "project" / "requirements.txt").read_text()
    assert f"albumentations>=0.3.2 --hash=sha256:{digest}\n" in copied, copied
    assert "--no-binary" not in copied


@pytest.mark.parametrize(
    ("requirements", "said", "line"),
    [
        ("../outside.txt", "a path that leaves the project", 11),
        ("/etc/passwd", "an absolute path", 11),
        ("missing.txt", "cannot read requirements file", 11),
    ],
)
def test_a_path_outside_or_absent_is_refused_with_file_and_line(
    project: Path, requirements: str, said: str, line: int
) -> None:
    _config(project, requirements=requirements)
    stderr = render_refused(project)
    assert said in stderr and f"envkit.yaml:{line}:" in stderr, stderr


def test_a_symlink_out_a_fifo_and_a_huge_file_are_refused(project: Path, tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("six\n")
    (project / "linked.txt").symlink_to(tmp_path / "secret.txt")
    _config(project, requirements="linked.txt")
    assert "leaves the project" in render_refused(project)
    os.mkfifo(project / "fifo.txt")
    _config(project, requirements="fifo.txt")
    assert "not a regular file" in render_refused(project)
    (project / "huge.txt").write_bytes(b"#" * (2 * 1024 * 1024))
    _config(project, requirements="huge.txt")
    said = render_refused(project, env={"ENVKIT_PROJECT_FILE_LIMIT": "1"})
    assert "over the" in said and "envkit's bound is 1 MiB; ENVKIT_PROJECT_FILE_LIMIT" in said


def test_a_build_step_as_the_login_user_runs_under_its_ids(project: Path) -> None:
    _config(project, "build:\n  steps:\n    - run: id -u > /tmp/who\n      user: login\n")
    assert envkit("render", cwd=project).returncode == 0
    dockerfile = (project / ".envkit" / "Dockerfile").read_text()
    assert 'RUN ["setpriv", "--reuid", "1000", "--regid", "1000", "--clear-groups"' in dockerfile
    runs = [line for line in dockerfile.splitlines() if line.startswith("RUN ")]
    assert runs[-1].endswith('"-c", "id -u > /tmp/who"]'), "after the python packages: the end"
    assert dockerfile.rstrip().endswith('LABEL io.envkit.project="byo"'), "only the name after it"
