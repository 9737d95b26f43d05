"""CLI conventions (issues 29, 37): shell completion that knows the config's members, verify's
targets and check ids (the real bash, zsh and fish run the script envkit prints for them), an
example in every command's help, and `envkit init` that looks around: the project's files, the
keys the user has, and a schema line for editors."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer

from envkit.cli.registry import build_app
from tests.helpers import REPO, envkit

app = build_app()

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
    script = _installed("completion", "bash", env={"SHELL": "/bin/bash"}).stdout
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


def _real_shell(shell: str, script: str, folder: Path) -> list[str]:
    """SCRIPT run by the real SHELL (Debian's zsh or fish) with envkit on its PATH."""
    done = subprocess.run(
        [shell, "-f" if shell == "zsh" else "--no-config", "-c", script],
        cwd=folder, capture_output=True, text=True, timeout=60, check=False,
        env={"PATH": f"{ENVKIT_BIN}:/usr/bin:/bin", "HOME": str(folder)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def _zsh(folder: Path, *words: str) -> list[str]:
    """The script `envkit completion zsh` prints, sourced by zsh and run for WORDS; zsh's own
    _arguments (the completion system's, absent without a terminal) prints what it was given."""
    quoted = " ".join(f"'{w}'" for w in words)
    script = (
        '_arguments() { print -rl -- "$@" }; compdef() { : }; '
        "source <(envkit completion zsh); "
        f"words=({quoted}); CURRENT={len(words)}; _envkit_completion"
    )
    found = []
    for line in _real_shell("zsh", script, folder):  # _arguments' specs escape their colons
        found += [v.replace("\\", "") for v in re.findall(r'"([^"]+)"', line)]
    return found


def _fish(folder: Path, line: str) -> list[str]:
    script = f"envkit completion fish | source; complete -C'{line}'"
    return [row.split("\t")[0] for row in _real_shell("fish", script, folder)]


@pytest.mark.skipif(not shutil.which("zsh"), reason="zsh is not installed (make system-deps)")
def test_zsh_completes_members_targets_and_check_ids_through_the_installed_script(
    tmp_path: Path,
) -> None:
    (tmp_path / "envkit.yaml").write_text(TEAM)
    assert sorted(_zsh(tmp_path, "envkit", "start", "al")) == ["albert", "alice"]
    assert _zsh(tmp_path, "envkit", "verify", "--target", "docker://lab-b") == ["docker://lab-bob"]
    assert "gpu.xid" in _zsh(tmp_path, "envkit", "verify", "--only", "gpu.x")


@pytest.mark.skipif(not shutil.which("fish"), reason="fish is not installed (make system-deps)")
def test_fish_completes_members_targets_and_check_ids_through_the_installed_script(
    tmp_path: Path,
) -> None:
    (tmp_path / "envkit.yaml").write_text(TEAM)
    assert sorted(_fish(tmp_path, "envkit start al")) == ["albert", "alice"]
    assert _fish(tmp_path, "envkit verify -t docker://lab-b") == ["docker://lab-bob"]
    assert "gpu.xid" in _fish(tmp_path, "envkit verify --only gpu.x")
    assert {"start", "status"} <= set(_fish(tmp_path, "envkit sta"))


@pytest.mark.parametrize(
    ("shell", "where", "says"),
    [
        ("bash", ".bash_completions/envkit.sh", "_ENVKIT_COMPLETE=complete_bash"),
        ("zsh", ".zfunc/_envkit", "_ENVKIT_COMPLETE=complete_zsh"),
        ("fish", ".config/fish/completions/envkit.fish", "_ENVKIT_COMPLETE=complete_fish"),
    ],
)
def test_completion_install_writes_the_named_shells_script(
    tmp_path: Path, shell: str, where: str, says: str
) -> None:
    """The shell named wins over $SHELL (typer's own option installed bash's script for any)."""
    done = _installed(
        "completion", shell, "--install", env={"HOME": str(tmp_path), "SHELL": "/bin/bash"}
    )
    assert done.returncode == 0, done.stderr
    assert says in (tmp_path / where).read_text()
    detected = _installed("completion", env={"HOME": str(tmp_path), "SHELL": f"/usr/bin/{shell}"})
    assert says in detected.stdout, "no shell named: $SHELL's"


def test_an_unknown_shell_is_refused_with_the_ones_there_are(tmp_path: Path) -> None:
    done = _installed("completion", "tcsh", env={"HOME": str(tmp_path)})
    assert done.returncode == 2 and "bash, zsh, fish" in done.stderr, done.stderr


def test_install_completion_for_bash_writes_the_script_and_sources_it(tmp_path: Path) -> None:
    done = _installed(
        "completion", "bash", "--install", env={"HOME": str(tmp_path), "SHELL": "/bin/bash"}
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
    # Alternatives are alternatives: the conda file wins by precedence, the requirements file
    # is named as a commented-out alternative, apt.txt is used always.
    assert "file: environment.yml" in text and "apt_file: apt.txt" in text
    assert (
        "# also here, not used (uv.lock, poetry.lock, pdm.lock > pixi.lock, conda-lock.yml > Pipfile.lock > pyproject.toml > environment.yml > requirements.txt > Pipfile > setup.py > a recipe's `pip install`): requirements.txt"
        in text
    )
    assert "uses environment.yml (found here; precedence" in said
    assert "`pip install`): requirements.txt" in said
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
