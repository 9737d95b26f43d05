"""`envkit ssh-config`: ~/.ssh/config blocks for the environment's containers.

Which private key on this machine logs in to a container: the private half of a key the config
authorizes, found beside its .pub in ~/.ssh, or held by ssh-agent. Only an IdentityFile that
exists and is authorized is written; with none, no IdentityFile (and no IdentitiesOnly), and a
note says which key to use."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from envkit.engine.endpoint import current_endpoint
from envkit.errors import FieldError
from envkit.files import read_regular
from envkit.plan.box.keys import parse_public_key
from envkit.processes import quiet_output
from envkit.render.ssh_config import Identity, connect_host, ssh_config_blocks
from envkit.services.project import load_project

PUB_LIMIT = 16 * 1024


@dataclass(frozen=True, kw_only=True)
class SshConfigRequest:
    config: str | None = None
    member: str | None = None
    host: str | None = None  # the HostName to write (default: localhost, or a remote engine's)
    identity: str | None = None  # the IdentityFile to write


def run(request: SshConfigRequest) -> int:
    host, member, identity = request.host, request.member, request.identity
    project = load_project(request.config)
    plan = project.plan
    endpoint = current_endpoint()
    if host is None and endpoint.remote:  # the containers run on the engine's machine
        host = endpoint.host
    # The Python running envkit now, by its absolute path: ssh runs the command with the
    # user's login PATH, which may not hold this virtual environment.
    wake = [sys.executable, "-m", "envkit", "start", "--quiet"]
    wake += ["--config", str(project.config.resolve())]
    found: str | dict[str, Identity] = identity or {}
    if identity is None:  # the key this machine has for each container's user
        agent = {blob for line in agent_lines() if (blob := _blob(line))}
        found = {s.name: identity_for(s.keys, Path.home(), agent) for s in plan.services}
    sys.stdout.write(ssh_config_blocks(plan, member=member, host=host, identity=found, wake=wake))
    return 0


def target_urls(config: str | None) -> list[str]:
    """The verify targets envkit.yaml implies, for shell completion: each container by name
    (docker://) and by its SSH login (ssh://), the image, and this machine."""
    plan = load_project(config).plan
    urls = [f"docker://{s.container_name}" for s in plan.services]
    if plan.ssh.enabled:
        host = connect_host(plan)
        urls += [f"ssh://{s.user}@{host}:{s.ssh_port}" for s in plan.services]
    return [*urls, f"image://{plan.image.tag}", "local://"]


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


def agent_lines() -> list[str]:
    """The public keys the SSH agent holds (`ssh-add -L`), none where there is no agent."""
    return (quiet_output(["ssh-add", "-L"], timeout=5) or "").splitlines()


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
