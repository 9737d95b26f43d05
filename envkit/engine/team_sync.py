"""Keep running containers in step with the team in envkit.yaml, without rebuilding or restarting:
re-install authorized keys where they changed, and rotate the shared notebook's token when the
members change (the containers of departed members are engine/lifecycle.py's to remove)."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from envkit.errors import EnvkitError

if TYPE_CHECKING:
    from envkit.plan import Plan

INSTALLED_KEYS = "/var/lib/envkit/keys/{user}/authorized_keys"


@dataclass(frozen=True)
class KeySync:
    container: str
    keys: int  # how many keys it now accepts
    refreshed: bool  # False: it already had exactly these keys
    ended: int = 0  # processes of open SSH sessions ended because a key was removed


def _installed(container: Any, user: str) -> set[str] | None:
    result = container.exec_run(["cat", INSTALLED_KEYS.format(user=user)], user="root")
    if result.exit_code != 0:
        return None
    text = result.output.decode("utf-8", "replace")
    return {line.strip() for line in text.splitlines() if line.strip()}


def sync_keys(
    client: Any, plan: Plan, running_before: set[str], copy_from: Path | None = None
) -> list[KeySync]:
    """For containers that were already running before this `up` (new ones installed their keys
    at start), compare the keys they accept with the plan and re-install where they differ.
    COPY_FROM: the render folder whose keys are copied in first (a remote engine's containers
    have no bind mount of it)."""
    synced = []
    for service in plan.services:
        if service.container_name not in running_before:
            continue
        container = client.containers.get(service.container_name)
        wanted = set(service.keys)
        if _installed(container, service.user) == wanted:
            synced.append(KeySync(service.container_name, len(wanted), refreshed=False))
            continue
        if copy_from is not None:
            from envkit.engine.sdk_up import copy_keys

            copy_keys(container, service, copy_from)
        result = container.exec_run(["/usr/local/bin/envkit-install-keys"], user="root")
        if result.exit_code != 0:
            said = result.output.decode("utf-8", "replace").strip().splitlines()[-1:]
            raise EnvkitError(
                f"could not refresh the keys in {service.container_name}: {' '.join(said)}",
                "its image predates key refresh: run `envkit build`, then `envkit up`",
            )
        ended = re.search(r"ended (\d+) process", result.output.decode("utf-8", "replace"))
        count = int(ended.group(1)) if ended else 0
        synced.append(KeySync(service.container_name, len(wanted), refreshed=True, ended=count))
    return synced


def members_digest(plan: Plan) -> str:
    """Names the member list (not secret): the shared notebook's token rotates when it changes."""
    return hashlib.sha256("\n".join(sorted(plan.members)).encode()).hexdigest()[:16]


def sync_notebook_tokens(client: Any, plan: Plan) -> list[str]:
    """Shared mode: tell the container who the members are; its token rotates when they changed
    (a member who left must not keep a working notebook URL). The containers that rotated."""
    if not plan.notebook.enabled:
        return []
    rotated = []
    for service in plan.services:
        if service.member is not None:
            continue  # per-member: each server is its member's alone
        container = client.containers.get(service.container_name)
        result = container.exec_run(
            ["/usr/local/bin/envkit-notebook", "members", members_digest(plan)], user="root"
        )
        if result.exit_code == 0 and b"rotated" in result.output:
            rotated.append(service.container_name)
    return rotated
