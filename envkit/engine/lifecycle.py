"""What `envkit up` will do to each container, decided before anything is done, so a recreate
that would lose a member's work is named (and asked about) first:

- create: none exists;
- start: one exists, stopped (idle stop, a reboot, an OOM), its spec and image unchanged;
- keep: running, unchanged (or named by --keep-running);
- recreate: its spec (io.envkit.spec) or its image changed; the writable layer goes, the
  volumes stay.

Containers of members who left envkit.yaml are removed; their homes stay."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from docker.errors import ImageNotFound, NotFound

from envkit.engine.client import containers
from envkit.engine.layer_changes import LayerChanges, read_changes
from envkit.plan.box.access import Service
from envkit.plan.box.containers import MEMBER_LABEL, SPEC_LABEL, container_spec
from envkit.plan.models.plan import Plan

Action = Literal["create", "start", "keep", "recreate"]


@dataclass(frozen=True)
class Planned:
    service: Service
    action: Action
    container: Any | None  # the existing one
    why: str = ""  # what changed, for a recreate
    changes: LayerChanges | None = None  # what the recreate would lose


@dataclass(frozen=True)
class Departed:
    container: Any
    changes: LayerChanges


@dataclass(frozen=True)
class UpPlan:
    planned: tuple[Planned, ...]
    departed: tuple[Departed, ...]

    @property
    def at_risk(self) -> list[tuple[str, LayerChanges]]:
        """(who, changes) of every container a recreate or removal would lose work in."""
        found = [
            (p.service.member or p.service.user, p.changes)
            for p in self.planned
            if p.changes and p.action == "recreate"
        ]
        found += [
            (d.container.labels.get(MEMBER_LABEL) or d.container.name, d.changes)
            for d in self.departed
        ]
        return [(who, changes) for who, changes in found if changes]


def _why(container: Any, wanted_spec: str, image_id: str | None) -> str:
    reasons = []
    if container.labels.get(SPEC_LABEL) != wanted_spec:
        reasons.append("its settings changed")
    if image_id is not None and container.attrs.get("Image") != image_id:
        reasons.append("the image was rebuilt")
    return " and ".join(reasons)


def decide(client: Any, plan: Plan, keep: tuple[str, ...] = ()) -> UpPlan:
    try:
        image_id: str | None = client.images.get(plan.image.tag).id
    except ImageNotFound:
        image_id = None
    planned = []
    for service in plan.services:
        try:
            container = client.containers.get(service.container_name)
        except NotFound:
            planned.append(Planned(service, "create", None))
            continue
        spec = dict(container_spec(plan, service).labels)[SPEC_LABEL]
        why = _why(container, spec, image_id)
        named = {service.member, service.user, service.name, service.container_name} & set(keep)
        if why and not named:
            planned.append(Planned(service, "recreate", container, why, read_changes(container)))
        elif container.status == "running":  # unchanged, or kept as it is by --keep-running
            planned.append(Planned(service, "keep", container, why))
        else:
            planned.append(Planned(service, "start", container, why))
    wanted = {s.container_name for s in plan.services}
    gone = tuple(
        Departed(c, read_changes(c))
        for c in containers(client, plan.project)
        if c.name not in wanted
    )
    return UpPlan(tuple(planned), gone)
