"""What `envkit init` finds around it: the project's dependency files, to propose a config that
uses them, and the public keys the user actually has, so the config names only keys that exist
(`init` then `render` never fails on a fresh machine)."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from envkit.errors import FieldError
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
    pyproject: str | None = None  # "pyproject.toml" (and uv.lock) when python.project can use it
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


def _pyproject(folder: Path) -> tuple[str | None, str | None]:
    """("pyproject.toml" or "pyproject.toml and uv.lock", the lock's torch) where the project
    describes its dependencies in [project] (a Poetry-only file, or dynamic dependencies, would
    fail the first render: not proposed)."""
    from envkit.files import TOMLDecodeError, toml_loads

    try:
        data = toml_loads((folder / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, TOMLDecodeError):
        return None, None
    project = data.get("project")
    if not isinstance(project, dict) or "dependencies" in (project.get("dynamic") or ()):
        return None, None
    try:
        lock = toml_loads((folder / "uv.lock").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, TOMLDecodeError):
        return "pyproject.toml", None
    torch = next(
        (
            str(p.get("version", "")).split("+")[0]
            for p in lock.get("package") or ()
            if isinstance(p, dict) and p.get("name") == "torch"
        ),
        None,
    )
    return "pyproject.toml and uv.lock", torch


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
    pyproject, locked_torch = _pyproject(folder)
    return Survey(
        pyproject=pyproject,
        locked_torch=locked_torch,
        requirements=requirements,
        apt_file=first(APT_FILES),
        conda_file=first(CONDA_FILES),
        key_file=key_file,
        agent_key=None if key_file else _agent_key(),
        skipped_keys=tuple(skipped),
    )
