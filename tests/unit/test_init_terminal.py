"""`envkit init` on a terminal (issue 29): run in a real pseudo-terminal, it asks for what no
flag said (torch, CUDA, mirror, notebook, team), explains a wrong answer and asks again, and
writes a config that renders. With --no-input, or without a terminal, it asks nothing."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

from tests.helpers import REPO, envkit

TIMEOUT_S = 60


def _on_terminal(cwd: Path, home: Path, answers: list[str], *flags: str) -> tuple[int, str]:
    """Run `envkit init FLAGS` with a pty as its terminal, answering each prompt (a line that
    ends in ']: ') with the next answer. Returns (exit code, everything it wrote)."""
    leader, follower = pty.openpty()
    env = {**os.environ, "HOME": str(home), "PYTHONPATH": str(REPO), "TERM": "dumb"}
    env.pop("SSH_AUTH_SOCK", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "envkit", "init", *flags],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        cwd=cwd,
        env=env,
        close_fds=True,
    )
    os.close(follower)
    output, pending = b"", list(answers)
    deadline = time.monotonic() + TIMEOUT_S
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([leader], [], [], 0.5)
            if not ready:
                if process.poll() is not None:
                    break
                continue
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            output += chunk
            asked = output.count(b"]: ")  # prompts so far; an echoed answer holds none
            if asked > len(answers) - len(pending) and pending:
                os.write(leader, pending.pop(0).encode() + b"\n")
        code = process.wait(timeout=10)
    finally:
        os.close(leader)
        if process.poll() is None:
            process.kill()
    return code, output.decode(errors="replace").replace("\r\n", "\n")


def _key(home: Path, name: str) -> Path:
    path = home / name
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", f"{name}@laptop", "-f", str(path)],
        check=True,
    )
    return path.with_suffix(".pub")


def test_init_asks_on_a_terminal_and_the_answers_render(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    project.mkdir()
    bob = _key(home, "bob")
    code, said = _on_terminal(project, home, ["2.4", "", "tuna", "y", f"bob={bob}"])
    assert code == 0, said
    for prompt in ("torch release", "CUDA build", "mirror", "JupyterLab", "team members"):
        assert prompt in said, said
    config = (project / "envkit.yaml").read_text()
    assert 'torch: "2.4.' in config and "preset: tuna" in config, config
    assert "notebook:\n  enabled: true" in config
    assert "- name: bob" in config and bob.read_text().split()[1] in config
    rendered = envkit("render", cwd=project, env={"HOME": str(home)})
    assert rendered.returncode == 0, rendered.stdout + rendered.stderr


def test_a_wrong_answer_is_explained_and_asked_again(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    project.mkdir()
    answers = ["9.9", "2.4", "", "nope", "ustc", "maybe", "n", "bob=/no/such.pub", "none"]
    code, said = _on_terminal(project, home, answers)
    assert code == 0, said
    assert said.count("torch release") == 2 and said.count("mirror (") == 2, said
    assert "'nope' is not a preset" in said and "'maybe' is neither yes nor no" in said
    assert "no key file '/no/such.pub'" in said
    config = (project / "envkit.yaml").read_text()
    assert "preset: ustc" in config and "notebook:" not in config and "\nteam:" not in config


def test_flags_answer_their_questions_and_no_input_asks_nothing(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    project.mkdir()
    code, said = _on_terminal(
        project, home, ["n", "none"], "--torch", "2.4.1", "--cuda", "12.1", "--preset", "bfsu"
    )
    assert code == 0, said
    assert "torch release" not in said and "CUDA build" not in said and "mirror (" not in said
    assert "JupyterLab" in said
    code, said = _on_terminal(project, home, [], "--force", "--no-input")
    assert code == 0 and "]:" not in said, said
