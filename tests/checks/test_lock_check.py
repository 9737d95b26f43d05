"""system.lock against a lock of this very machine: the same state passes, a changed version or
a swapped torch fails naming it, an addition is listed and passes. The lock is captured by the
real `capture` command with the real torch interpreter (the one the check then runs under)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from envkit.checks.programs.lockfile import Lock, empty_lock, format_lock
from tests.checks.conftest import RunChecks
from tests.helpers import PLANTS_DIR, REPO, status_of


def _captured(python: str) -> Lock:
    done = subprocess.run(
        [python, "-m", "envkit.checks", "capture"],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=dict(os.environ, PYTHONPATH=f"{PLANTS_DIR}{os.pathsep}{REPO}"),
        check=True,
        timeout=300,
    )
    state = json.loads(done.stdout)["state"]
    lock = empty_lock()
    for section, entries in state.items():
        lock[section] = {name: tuple(values) for name, values in entries.items()}
    return lock


def _write(tmp_path: Path, lock: Lock) -> str:
    path = tmp_path / "envkit.lock"
    path.write_text(format_lock(lock, ("a test lock",)))
    return str(path)


def test_a_lock_of_this_machine_passes(
    run_checks: RunChecks, torch_python: str, tmp_path: Path
) -> None:
    lock = _captured(torch_python)
    assert lock["apt"] and lock["pip"] and lock["torch"]["torch"][0] != "-"
    status, message = status_of(
        run_checks(["system.lock"], lock_path=_write(tmp_path, lock)), "system.lock"
    )
    assert status == "pass", message
    assert "locked packages as built" in message


def test_a_changed_apt_version_fails_naming_the_package(
    run_checks: RunChecks, torch_python: str, tmp_path: Path
) -> None:
    lock = _captured(torch_python)
    name = sorted(lock["apt"])[0]
    version, origin = lock["apt"][name]
    lock["apt"][name] = (version + "-older", origin)
    report = run_checks(["system.lock"], lock_path=_write(tmp_path, lock))
    status, message = status_of(report, "system.lock")
    assert status == "fail"
    assert f"apt {name} {version}-older -> {version}" in message


def test_a_swapped_torch_fails(run_checks: RunChecks, torch_python: str, tmp_path: Path) -> None:
    path = _write(tmp_path, _captured(torch_python))
    status, message = status_of(
        run_checks(["system.lock"], "other_torch_release", lock_path=path), "system.lock"
    )
    assert status == "fail"
    assert "torch torch" in message and "9.9.9+planted" in message


def test_a_package_added_since_the_lock_is_listed_not_failed(
    run_checks: RunChecks, torch_python: str, tmp_path: Path
) -> None:
    lock = _captured(torch_python)
    name = sorted(lock["pip"])[-1]
    del lock["pip"][name]
    status, message = status_of(
        run_checks(["system.lock"], lock_path=_write(tmp_path, lock)), "system.lock"
    )
    assert status == "pass", message
    assert f"pip {name}" in message and "added" in message


def test_without_a_lock_it_skips_saying_how_to_make_one(
    run_checks: RunChecks, tmp_path: Path
) -> None:
    report = run_checks(["system.lock"], lock_path=str(tmp_path / "none.lock"))
    status, message = status_of(report, "system.lock")
    assert status == "skip" and "envkit build --locked" in message
