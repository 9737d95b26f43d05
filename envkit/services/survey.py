"""What `envkit init` finds around it: the project's dependency files, to propose a config that
uses them, and the public keys the user actually has, so the config names only keys that exist
(`init` then `render` never fails on a fresh machine)."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envkit.errors import FieldError
from envkit.files import read_regular
from envkit.plan.keys import parse_public_key

# The usual names, in the order repo2docker and envd look for them.
REQUIREMENTS = ("requirements.txt", "binder/requirements.txt")
APT_FILES = ("apt.txt", "binder/apt.txt")
CONDA_FILES = ("environment.yml", "environment.yaml", "binder/environment.yml")
KEY_FILES = ("id_ed25519.pub", "id_ecdsa.pub", "id_rsa.pub")  # strongest first


@dataclass(frozen=True)
class Survey:
    requirements: tuple[str, ...] = ()
    apt_file: str | None = None
    conda_file: str | None = None
    key_file: str | None = None  # as written in envkit.yaml: ~/.ssh/NAME.pub
    agent_key: str | None = None  # a key line from ssh-agent, when no file has one
    skipped_keys: tuple[str, ...] = ()  # files found but not usable, with why
    pyproject: bool = False  # a pyproject.toml python.project can use
    uv_lock: bool = False  # and a uv.lock beside it
    locked_torch: str | None = None  # the torch its uv.lock pins


def _usable(text: str) -> str | None:
    """None when the key is one sshd in the image accepts; else why not."""
    try:
        parse_public_key(text.strip().splitlines()[0] if text.strip() else "")
    except (FieldError, IndexError) as exc:
        return getattr(exc, "problem", "unreadable")
    return None


def _agent_key() -> str | None:
    try:
        listed = subprocess.run(
            ["ssh-add", "-L"], capture_output=True, text=True, timeout=5, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    for line in listed.stdout.splitlines() if listed.returncode == 0 else ():
        if _usable(line) is None:
            return line.strip()
    return None


def _toml(path: Path) -> dict[str, Any] | None:
    """A project file's TOML, read as envkit reads any file from elsewhere (a regular file under
    the cap: a FIFO named pyproject.toml must not hang init); None where it is not usable."""
    from envkit.files import TOMLDecodeError, toml_loads
    from envkit.plan.project_files import FILE_LIMIT

    try:
        return toml_loads(read_regular(path, FILE_LIMIT, path.name).decode("utf-8"))
    except (FieldError, UnicodeDecodeError, TOMLDecodeError):
        return None


def _locked_torch(lock: dict[str, Any]) -> str | None:
    versions = (
        str(p.get("version", "")).split("+")[0]
        for p in lock.get("package") or ()
        if isinstance(p, dict) and p.get("name") == "torch"
    )
    return next(versions, None)


def survey(folder: Path, home: Path) -> Survey:
    def first(names: tuple[str, ...]) -> str | None:
        return next((n for n in names if (folder / n).is_file()), None)

    requirements = tuple(n for n in REQUIREMENTS if (folder / n).is_file())
    skipped = []
    key_file = None
    for name in KEY_FILES:
        path = home / ".ssh" / name
        if not path.is_file():
            continue
        why = _usable(path.read_text(errors="replace"))
        if why is None:
            key_file = f"~/.ssh/{name}"
            break
        skipped.append(f"~/.ssh/{name}: {why}")
    # A pyproject.toml is proposed where it describes its dependencies in [project] (a
    # Poetry-only file, or dynamic dependencies, would fail the first render).
    project = (_toml(folder / "pyproject.toml") or {}).get("project")
    usable = isinstance(project, dict) and "dependencies" not in (project.get("dynamic") or ())
    lock = _toml(folder / "uv.lock") if usable and (folder / "uv.lock").exists() else None
    return Survey(
        pyproject=usable,
        uv_lock=lock is not None,
        locked_torch=_locked_torch(lock) if lock is not None else None,
        requirements=requirements,
        apt_file=first(APT_FILES),
        conda_file=first(CONDA_FILES),
        key_file=key_file,
        agent_key=None if key_file else _agent_key(),
        skipped_keys=tuple(skipped),
    )
