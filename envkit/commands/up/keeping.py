"""What `envkit up` does so that no member's work is lost: a recreate that would throw away what
someone installed by hand is named and asked about (or refused in a script without --yes)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from envkit.errors import EnvkitError


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
