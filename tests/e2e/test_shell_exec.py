"""In without SSH: `envkit exec` and `envkit shell` on the CPU example's container, on the real
engine, for a caller with no SSH key at all (a HOME without ~/.ssh, no agent): the command runs
as the login user, in the workspace, with the login environment (torch importable), its exit
code passed through; the shell is driven through a real pseudo-terminal."""

from __future__ import annotations

import os
import pty
import select
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import ENV_IMAGE
from tests.e2e.images import E2E_NAME, E2E_PORT, copy_project, docker
from tests.e2e.workers import port
from tests.helpers import envkit

pytestmark = [pytest.mark.docker, pytest.mark.slow]
PROJECT = "envkit-shell"


@pytest.fixture(scope="module")
def box(
    env_image: str, project_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Path, dict[str, str]]]:
    """One container for the module's tests: they change nothing in it."""
    tmp_path = tmp_path_factory.mktemp("shell")
    project = tmp_path / "project"
    project.mkdir()
    config = copy_project(project_dir, project)
    config.write_text(
        config.read_text()
        .replace(f"name: {E2E_NAME}", f"name: {PROJECT}")
        .replace(f"port: {E2E_PORT}", f"port: {port(18841)}")
    )
    docker("tag", ENV_IMAGE, f"envkit/{PROJECT}:latest")
    home = tmp_path / "home"  # no ~/.ssh here, and no agent: no key for the caller
    home.mkdir()
    env = {"HOME": str(home), "SSH_AUTH_SOCK": ""}
    try:
        up = envkit("up", cwd=project, env=env)
        assert up.returncode == 0, up.stdout + up.stderr
        yield project, env
    finally:
        envkit("down", "--volumes", "--yes", cwd=project, env=env)
        docker("rmi", f"envkit/{PROJECT}:latest", check=False)


def test_exec_runs_as_the_login_user_in_the_workspace_and_passes_the_exit_code(
    box: tuple[Path, dict[str, str]],
) -> None:
    project, env = box
    probe = "import torch, os, getpass; print(torch.__version__, getpass.getuser(), os.getcwd())"
    done = envkit("exec", "--", "python", "-c", probe, cwd=project, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    version, user, where = done.stdout.split()
    assert version.startswith("1.13") and user == "dev", done.stdout
    assert where == "/workspace" or where.startswith("/home/dev"), done.stdout
    failed = envkit("exec", "--", "sh", "-c", "echo out; echo err >&2; exit 7", cwd=project,
                    env=env)  # fmt: skip
    assert failed.returncode == 7 and failed.stdout == "out\n" and "err" in failed.stderr


def test_shell_is_an_interactive_login_shell_through_a_real_terminal(
    box: tuple[Path, dict[str, str]],
) -> None:
    project, env = box
    pid, fd = pty.fork()
    if pid == 0:  # the child: envkit shell on the terminal's slave side
        try:
            os.chdir(project)
            os.environ.update(env)
            os.execv(sys.executable, [sys.executable, "-m", "envkit", "shell"])  # noqa: S606
        finally:
            os._exit(127)
    seen = b""
    try:
        os.write(fd, b"python -c 'import torch; print(\"TORCH\", torch.__version__)'; "
                     b"echo WHO $(id -un) TTY $(tty); exit 5\n")  # fmt: skip
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 1)
            if ready:
                try:
                    chunk = os.read(fd, 4096)
                except OSError:  # the terminal closed: the shell exited
                    break
                if not chunk:
                    break
                seen += chunk
        _, status = os.waitpid(pid, 0)
    finally:
        os.close(fd)
    text = seen.decode(errors="replace")
    assert "TORCH 1.13" in text, text
    assert "WHO dev TTY /dev/pts/" in text, text  # a terminal inside, not a pipe
    assert os.waitstatus_to_exitcode(status) == 5, text


def test_exec_without_a_running_container_names_envkit_up(tmp_path: Path) -> None:
    (tmp_path / "envkit.yaml").write_text(f"name: {PROJECT}-absent\n")
    done = envkit("exec", "--", "true", cwd=tmp_path)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "envkit up" in done.stderr, done.stderr


def test_logs_prints_what_the_engine_holds_for_the_container(
    box: tuple[Path, dict[str, str]],
) -> None:
    project, env = box

    def engine_lines() -> Counter[str]:  # the engine's own CLI, both of the container's streams
        engine = docker("logs", PROJECT)
        return Counter((engine.stdout + engine.stderr).splitlines())

    # The healthcheck connects to sshd every 10 s and sshd logs each connection, so the log
    # can grow while it is read: what envkit shows must lie between a read before and after.
    before = engine_lines()
    shown = envkit("logs", cwd=project, env=env)
    after = engine_lines()
    assert shown.returncode == 0, shown.stderr
    lines = Counter(shown.stdout.splitlines())
    assert before and before <= lines <= after, (shown.stdout, before, after)
