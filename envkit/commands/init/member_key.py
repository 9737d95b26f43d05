"""The public key init writes into envkit.yaml for the member running it: the strongest of
~/.ssh's key files that sshd in the image accepts, else one ssh-agent holds; the files found
but refused, each with why."""

from __future__ import annotations

from pathlib import Path

from envkit.commands.ssh_config import agent_lines
from envkit.errors import FieldError
from envkit.plan.box.keys import parse_public_key

KEY_FILES = ("id_ed25519.pub", "id_ecdsa.pub", "id_rsa.pub")  # strongest first


def _usable(text: str) -> str | None:
    """None when the key is one sshd in the image accepts; else why not."""
    try:
        parse_public_key(text.strip().splitlines()[0] if text.strip() else "")
    except (FieldError, IndexError) as exc:
        return getattr(exc, "problem", "unreadable")
    return None


def member_key(home: Path) -> tuple[str | None, str | None, tuple[str, ...]]:
    """(the key file as envkit.yaml names it, else ssh-agent's key line, the files refused)."""
    skipped: list[str] = []
    for name in KEY_FILES:
        path = home / ".ssh" / name
        if not path.is_file():
            continue
        why = _usable(path.read_text(errors="replace"))
        if why is None:
            return f"~/.ssh/{name}", None, tuple(skipped)
        skipped.append(f"~/.ssh/{name}: {why}")
    agent = next((line.strip() for line in agent_lines() if _usable(line) is None), None)
    return None, agent, tuple(skipped)
