"""What `envkit doctor` reports (a finding: the check, its verdict, what was seen and the fix)
and what its checks share (the host as learnt so far), apart from the checks themselves so that
groups of checks can live in modules of their own."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from envkit.commands.project import Project
    from envkit.engine.facts import EngineFacts
    from envkit.plan import Plan

FindingStatus = Literal["ok", "info", "warn", "fail"]


@dataclass(frozen=True)
class Finding:
    check: str
    status: FindingStatus
    message: str
    fix: str | None = None


@dataclass
class Host:
    """What earlier findings learned and later ones need."""

    plan: Plan | None = None
    project: Project | None = None
    client: Any | None = None
    info: dict[str, Any] | None = None
    facts: EngineFacts | None = None
