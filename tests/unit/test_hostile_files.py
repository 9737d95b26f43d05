"""Hostile files: a config or key file that would hang, exhaust memory or leak a secret gets a
quick exit-2 message instead. Each runs the real CLI in a subprocess with a deadline, so a hang
fails the test rather than the suite."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.helpers import EXAMPLES
from tests.helpers import envkit as run_envkit

KEY = (EXAMPLES / "seed-pytorch-1.11" / "keys" / "lead.pub").read_text().strip()
DEADLINE_S = 30  # far above the ~1 s these take; a hang or a memory blow-up passes it
ALIAS_BOMB = (
    "name: a\nx-bomb:\n"
    '  a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    + "".join(
        f"  {c}: &{c} [{', '.join(['*' + p] * 9)}]\n"
        for p, c in zip("abcdefgh", "bcdefghi", strict=True)
    )
)


def envkit(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_envkit(*args, cwd=cwd, timeout=DEADLINE_S)


def refused(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and "fix:" in done.stderr, done.stderr
    return done.stderr


def with_key_file(tmp_path: Path, key_file: str) -> Path:
    (tmp_path / "envkit.yaml").write_text(
        f"name: a\nssh:\n  authorized_key_files: ['{key_file}']\n"
    )
    return tmp_path


def test_an_alias_bomb_is_refused_before_it_is_expanded(tmp_path: Path) -> None:
    assert len(ALIAS_BOMB) < 600, "a few hundred bytes that would expand to 9**9 nodes"
    (tmp_path / "envkit.yaml").write_text(ALIAS_BOMB)
    assert "alias" in refused(envkit("render", cwd=tmp_path))


def test_five_thousand_levels_of_nesting_is_refused(tmp_path: Path) -> None:
    (tmp_path / "envkit.yaml").write_text("name: a\nx: " + "[" * 5000 + "]" * 5000 + "\n")
    assert "deep" in refused(envkit("render", cwd=tmp_path))


def test_a_config_over_the_size_cap_is_refused_unread(tmp_path: Path) -> None:
    (tmp_path / "envkit.yaml").write_text("name: a\n" + "# padding\n" * 500_000)
    assert "over the 4194304-byte limit" in refused(envkit("render", cwd=tmp_path))


@pytest.mark.parametrize("kind", ["fifo", "directory", "device"])
def test_a_config_that_is_not_a_regular_file_is_refused(tmp_path: Path, kind: str) -> None:
    config = tmp_path / "cfg.yaml"
    if kind == "fifo":
        os.mkfifo(config)
    elif kind == "directory":
        config.mkdir()
    else:
        config = Path("/dev/zero")
    done = envkit("render", "-c", str(config), cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr


def test_non_utf8_config_names_its_line(tmp_path: Path) -> None:
    (tmp_path / "envkit.yaml").write_bytes(b"name: a\nruntime:\n  env: {A: caf\xe9}\n")
    assert "envkit.yaml:3" in refused(envkit("render", cwd=tmp_path))


@pytest.mark.parametrize("special", ["/dev/zero", "/dev/urandom", "fifo", "."])
def test_a_key_file_that_would_hang_or_never_end_is_refused(tmp_path: Path, special: str) -> None:
    if special == "fifo":
        os.mkfifo(tmp_path / "key.pub")
        special = "key.pub"
    err = refused(envkit("render", cwd=with_key_file(tmp_path, special)))
    assert "key file" in err


def test_a_credentials_file_given_as_a_key_file_is_not_echoed(tmp_path: Path) -> None:
    secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    (tmp_path / "credentials").write_text(
        f"[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = {secret}\n"
    )
    err = refused(envkit("render", cwd=with_key_file(tmp_path, "credentials")))
    assert secret[:8] not in err and "AKIAIOSF" not in err and "aws_" not in err
    assert err.count("key file") == 1, "one problem for the file, not one per line"
    assert "line 1 of 3" in err


def test_etc_passwd_as_a_key_file_is_one_problem_without_its_content(tmp_path: Path) -> None:
    err = refused(envkit("render", cwd=with_key_file(tmp_path, "/etc/passwd")))
    assert err.count("fix:") == 1 and "root:" not in err


def test_a_key_with_a_forced_command_is_named_as_such(tmp_path: Path) -> None:
    (tmp_path / "k.pub").write_text(f'command="/bin/date" {KEY}\n')
    err = refused(envkit("render", cwd=with_key_file(tmp_path, "k.pub")))
    assert "command=" in err and "unsupported key type" not in err
