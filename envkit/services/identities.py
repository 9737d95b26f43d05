"""Which private key on this machine logs in to a container: the private half of a key the
config authorizes, found beside its .pub in ~/.ssh, or held by ssh-agent. `envkit ssh-config`
writes only an IdentityFile that exists and is authorized; with none, it writes no
IdentityFile (and no IdentitiesOnly) and says which key to use."""

from __future__ import annotations

import subprocess
from pathlib import Path

from envkit.errors import FieldError
from envkit.files import read_regular
from envkit.plan.keys import parse_public_key
from envkit.render.ssh_config import Identity

PUB_LIMIT = 16 * 1024


def _blob(line: str) -> str | None:
    try:
        return parse_public_key(line).blob
    except FieldError:
        return None


def local_keys(home: Path) -> dict[str, str]:
    """{public key blob: IdentityFile} for every NAME.pub in ~/.ssh whose NAME exists beside
    it (the private half), written as ~/.ssh/NAME."""
    found: dict[str, str] = {}
    folder = home / ".ssh"
    if not folder.is_dir():
        return found
    for pub in sorted(folder.glob("*.pub")):
        private = pub.with_suffix("")
        if not private.is_file():
            continue
        try:
            text = read_regular(pub, PUB_LIMIT, "public key").decode("utf-8", "replace")
        except FieldError:
            continue
        blob = _blob(text.strip().splitlines()[0]) if text.strip() else None
        if blob is not None:
            found.setdefault(blob, f"~/.ssh/{private.name}")
    return found


def agent_keys() -> set[str]:
    try:
        listed = subprocess.run(
            ["ssh-add", "-L"], capture_output=True, text=True, timeout=5, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return set()
    if listed.returncode != 0:
        return set()
    return {blob for line in listed.stdout.splitlines() if (blob := _blob(line))}


def identity_for(authorized: tuple[str, ...], home: Path, agent: set[str]) -> Identity:
    """The first authorized key this machine holds: a file, else the agent's; else a note."""
    local = local_keys(home)
    blobs = [b for b in (_blob(line) for line in authorized) if b is not None]
    for blob in blobs:
        if blob in local:
            return Identity(local[blob])
    if any(blob in agent for blob in blobs):
        return Identity(None, agent=True)
    comments = [line.split(None, 2)[2] for line in authorized if len(line.split(None, 2)) == 3]
    named = f" ({', '.join(comments[:3])})" if comments else ""
    return Identity(
        None,
        note=f"none of the {len(blobs)} authorized key(s){named} is on this machine: name its "
        "private half with IdentityFile",
    )
