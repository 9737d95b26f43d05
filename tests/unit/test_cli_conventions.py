"""CLI conventions (issue 29): shell completion that knows the config's members (a real bash runs
the script envkit prints; zsh and fish, not installed here, are driven through the same
completion protocol their scripts use), an example in every command's help, and `envkit init`
that looks around: the project's files, the keys the user has, and a schema line for editors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer

from envkit.cli.app import app
from tests.helpers import REPO, envkit

KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGJ6k0pUu7e3Ry6mQeGq9C1Yc3W9bn1cF5Qh0m0y6s3K t"
TEAM = "name: lab\nssh:\n  allow_no_keys: true\nteam:\n  mode: per-member\n  members:\n" + "".join(
    f"    - name: {m}\n      keys: ['{KEY}']\n" for m in ("alice", "albert", "bob")
)
ENVKIT_BIN = str(Path(sys.executable).parent)


def _installed(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The `envkit` program as installed (completion scripts are written for its name)."""
    return subprocess.run(
        [str(Path(ENVKIT_BIN) / "envkit"), *args], capture_output=True, text=True, timeout=60,
        env={"PATH": "/usr/bin:/bin", **env}, check=False,
    )  # fmt: skip


def _leaves(command: Any, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command a user can run: the leaves, and the groups that run themselves."""
    if hasattr(command, "commands"):
        found = [path] if getattr(command, "invoke_without_command", False) else []
        for name, sub in command.commands.items():
            found += _leaves(sub, (*path, name))
        return found
    return [path]


@pytest.mark.parametrize("path", _leaves(typer.main.get_command(app)))
def test_every_command_shows_an_example_in_its_help(path: tuple[str, ...]) -> None:
    shown = envkit(*path, "--help")
    assert shown.returncode == 0 and "Example: envkit" in shown.stdout, (path, shown.stdout)


def test_bash_completes_commands_and_the_configs_members(tmp_path: Path) -> None:
    (tmp_path / "envkit.yaml").write_text(TEAM)
    script = _installed("--show-completion", "bash", env={"SHELL": "/bin/bash"}).stdout
    (tmp_path / "complete.sh").write_text(script)

    def complete(*words: str) -> list[str]:
        run = (
            f"source {tmp_path / 'complete.sh'}; COMP_WORDS=({' '.join(words)}); "
            f"COMP_CWORD={len(words) - 1}; _envkit_completion envkit; "
            'printf "%s\\n" "${COMPREPLY[@]}"'
        )
        done = subprocess.run(
            ["bash", "-c", run], cwd=tmp_path, capture_output=True, text=True, timeout=60,
            env={"PATH": f"{ENVKIT_BIN}:/usr/bin:/bin"}, check=True,
        )  # fmt: skip
        return done.stdout.split()

    assert complete("envkit", "start", "al") == ["alice", "albert"]
    assert complete("envkit", "ssh-config", "--member", "b") == ["bob"]
    assert {"start", "status"} <= set(complete("envkit", "st"))
    # verify's targets: each member's container by name, and the image
    assert complete("envkit", "verify", "--target", "docker://lab-a") == [
        "docker://lab-alice",
        "docker://lab-albert",
    ]
    assert complete("envkit", "verify", "-t", "image://") == ["image://envkit/lab:latest"]
    (tmp_path / "envkit.yaml").write_text("name: [broken")
    assert complete("envkit", "start", "al") == [], "a broken config completes nothing, quietly"


@pytest.mark.parametrize(
    ("shell", "extra", "expected"),
    [
        ("zsh", {}, '"alice"\n"albert"'),
        ("fish", {"_TYPER_COMPLETE_FISH_ACTION": "get-args"}, "alice\nalbert"),
    ],
)
def test_zsh_and_fish_complete_members_through_their_protocol(
    tmp_path: Path, shell: str, extra: dict[str, str], expected: str
) -> None:
    (tmp_path / "envkit.yaml").write_text(TEAM)
    env = {"_ENVKIT_COMPLETE": f"complete_{shell}", "_TYPER_COMPLETE_ARGS": "envkit start al"}
    done = subprocess.run(
        [str(Path(ENVKIT_BIN) / "envkit")], cwd=tmp_path, capture_output=True, text=True,
        env={**env, **extra, "PATH": "/usr/bin:/bin"}, timeout=60, check=False,
    )  # fmt: skip
    assert expected in done.stdout, done.stdout + done.stderr


def test_install_completion_for_bash_writes_the_script_and_sources_it(tmp_path: Path) -> None:
    done = _installed(
        "--install-completion", "bash", env={"HOME": str(tmp_path), "SHELL": "/bin/bash"}
    )
    assert done.returncode == 0, done.stderr
    script = tmp_path / ".bash_completions" / "envkit.sh"
    assert "_ENVKIT_COMPLETE=complete_bash" in script.read_text()
    assert f"source '{script}'" in (tmp_path / ".bashrc").read_text()


def _keygen(home: Path, kind: str, bits: str | None = None) -> None:
    (home / ".ssh").mkdir(exist_ok=True)
    name = {"ed25519": "id_ed25519", "rsa": "id_rsa", "ecdsa": "id_ecdsa"}[kind]
    extra = ["-b", bits] if bits else []
    subprocess.run(
        ["ssh-keygen", "-q", "-t", kind, *extra, "-N", "", "-f", str(home / ".ssh" / name)],
        check=True, timeout=60,
    )  # fmt: skip


def _init(folder: Path, home: Path) -> tuple[str, str]:
    done = envkit(
        "init", "--flavor", "cuda", cwd=folder, env={"HOME": str(home), "SSH_AUTH_SOCK": ""}
    )
    assert done.returncode == 0, done.stderr
    return done.stdout, (folder / "envkit.yaml").read_text()


def test_init_in_a_project_uses_its_files_and_writes_a_schema_for_editors(tmp_path: Path) -> None:
    import shutil

    folder = tmp_path / "proj"
    shutil.copytree(REPO / "tests" / "data" / "projects" / "byo", folder)
    said, text = _init(folder, tmp_path)
    assert text.startswith("# yaml-language-server: $schema=envkit.schema.json\n")
    schema = json.loads((folder / "envkit.schema.json").read_text())
    assert schema == json.loads(envkit("schema").stdout), "the schema `envkit schema` prints"
    assert "requirements: [requirements.txt]" in text and "apt_file: apt.txt" in text
    assert "file: environment.yml" in text
    assert "uses requirements.txt (found here)" in said
    rendered = envkit("render", cwd=folder, env={"HOME": str(tmp_path)})
    assert rendered.returncode == 0, rendered.stderr  # a fresh machine: no key, still renders
    assert "ssh-keygen -t ed25519" in said


@pytest.mark.parametrize(
    ("keys", "named", "skipped"),
    [
        ([("ed25519", None)], "~/.ssh/id_ed25519.pub", None),
        ([("ecdsa", None)], "~/.ssh/id_ecdsa.pub", None),
        ([("rsa", "2048")], None, "~/.ssh/id_rsa.pub: RSA key of 2048 bits is too weak"),
        ([("rsa", "2048"), ("ecdsa", None)], "~/.ssh/id_ecdsa.pub", None),
    ],
)
def test_init_names_only_keys_the_user_has_and_sshd_accepts(
    tmp_path: Path, keys: list[tuple[str, str | None]], named: str | None, skipped: str | None
) -> None:
    for kind, bits in keys:
        _keygen(tmp_path, kind, bits)
    folder = tmp_path / "proj"
    folder.mkdir()
    said, text = _init(folder, tmp_path)
    if named:
        assert f"authorized_key_files: [{named}]" in text
    else:
        named_lines = [line for line in text.splitlines() if "authorized_key" in line]
        assert all(line.lstrip().startswith("#") for line in named_lines), named_lines
    if skipped:
        assert skipped in said, said
    assert envkit("render", cwd=folder, env={"HOME": str(tmp_path)}).returncode == 0
