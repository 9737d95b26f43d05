"""What `envkit up` does so that no member's work is lost: a recreate that would throw away what
someone installed by hand is named and asked about (or refused in a script without --yes), and
a container of an earlier envkit, its home still in its writable layer, has that home copied
into its new volume (and checked) before anything is recreated. The old container is stopped
and renamed while its home is copied; once the copy is checked its whole state is kept as an
image (compose would otherwise claim the renamed container as its own and remove it), until
someone removes that image by name."""

from __future__ import annotations

import sys
import tarfile
import time
from collections.abc import Callable
from typing import IO, Any, cast

from envkit.engine.lifecycle import Planned, UpPlan
from envkit.engine.volumes import ChunkReader, copy_path, read_volume
from envkit.errors import EnvkitError
from envkit.plan.box.containers import home_target, home_volume
from envkit.plan.models.plan import Plan

OLD_SUFFIX = "-envkit-old"  # an upgraded container, while its home is copied
KEPT_REPOSITORY = "envkit-kept"  # the old container's state, kept as an image


def guard(at_risk: list[tuple[str, Any]], yes: bool, ask: Callable[[str], str] | None) -> None:
    """Say what a recreate would lose; go on only with --yes or a yes at the terminal."""
    if not at_risk:
        return
    lines = [f"{changes.describe(who)}" for who, changes in at_risk]
    who = ", ".join(sorted({who for who, _ in at_risk}))
    text = (
        "; ".join(lines)
        + ". They are not in envkit.yaml and go with this recreate (homes, the workspace and "
        "the shared cache stay)"
    )
    fix = (
        "add them to envkit.yaml (packages.apt, packages.pip), or keep the container as it is: "
        f"`envkit up --keep-running {who.split(', ')[0]}`; `envkit up --yes` recreates anyway"
    )
    if yes:
        sys.stderr.write(f"note: {text}; recreating (--yes)\n")
        return
    if ask is None:
        raise EnvkitError(text, fix)
    sys.stderr.write(f"{text}.\n{fix}\n")
    if ask("Recreate anyway? [y/N] ").strip().lower() not in ("y", "yes"):
        raise EnvkitError("nothing was recreated", fix)


def archive_totals(chunks: Any) -> tuple[int, int]:
    """(files, bytes of file data) in a tar stream."""
    count = total = 0
    with tarfile.open(fileobj=cast(IO[bytes], ChunkReader(chunks)), mode="r|") as archive:
        for member in archive:
            if member.isfile():
                count += 1
                total += member.size
    return count, total


def upgrade_home(client: Any, plan: Plan, planned: Planned, say: Callable[[str], None]) -> None:
    """Move the home of a container made by an earlier envkit into its volume: stop it, rename
    it out of the way, copy the home, compare the copy with the original, keep the old one."""
    container, service = planned.container, planned.service
    home = home_target(plan, service)
    assert container is not None and home is not None
    volume = home_volume(plan.project, service)
    name = volume.engine_name(plan.project)
    old_name = _free_name(client, container.name + OLD_SUFFIX)
    container.stop(timeout=10)
    container.rename(old_name)
    try:
        client.volumes.get(name)
    except Exception:
        client.volumes.create(name, labels=dict(volume.labels))
    copy_path(client, container, home, plan.image.tag, name)
    stream, _ = container.get_archive(home)
    before = archive_totals(stream)
    after = archive_totals(read_volume(client, plan.image.tag, name))
    if before != after:
        raise EnvkitError(
            f"the copy of {service.user}'s home into {name} differs from {old_name}'s "
            f"({before[0]} files, {before[1]} bytes; copied {after[0]}, {after[1]})",
            f"nothing was removed: {old_name} still holds the home; see the engine's log",
        )
    stamp = time.strftime("%Y%m%d%H%M%S", time.gmtime())
    kept = f"{KEPT_REPOSITORY}/{container.name.removesuffix(OLD_SUFFIX)}:{stamp}"
    container.commit(repository=kept.split(":")[0], tag=stamp)
    container.remove()
    say(
        f"{service.container_name}: moved {service.user}'s home ({before[0]} files, "
        f"{before[1] / 1e6:.1f} MB) into volume {name}; the old container's whole state is "
        f"kept as image {kept} (`docker rmi {kept}` once you have checked)"
    )


def _free_name(client: Any, wanted: str) -> str:
    names = {c.name for c in client.containers.list(all=True)}
    name, number = wanted, 1
    while name in names:
        number += 1
        name = f"{wanted}-{number}"
    return name


def pending(decided: UpPlan) -> list[Planned]:
    return [p for p in decided.planned if p.action == "upgrade"]
