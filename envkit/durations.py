"""Durations as people write them (90, 90s, 15m, 2h, 1d): `verify --stress`, `team.idle_stop`.
A leaf, shared by the config, the CLI and the commands.

May import: errors."""

from __future__ import annotations

import re

from envkit.errors import FieldError

_DURATION = re.compile(r"(\d{1,7})\s*(s|m|h|d)?")
_UNIT_S = {"s": 1, "m": 60, "h": 60 * 60, "d": 24 * 60 * 60}


def _said(seconds: float) -> str:
    """A bound as it is written in the config: the largest whole unit (30d, not 2.592e+06 s)."""
    for unit, size in sorted(_UNIT_S.items(), key=lambda item: -item[1]):
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)}{unit}"
    return f"{seconds:g}s"


def parse_duration(text: str, *, low_s: float = 1, high_s: float = 30 * 86400) -> float:
    """Seconds, or FieldError naming the form and the range."""
    found = _DURATION.fullmatch(str(text).strip().lower())
    fix = f"write seconds or a number with s, m, h or d, between {_said(low_s)} and {_said(high_s)}"
    if found is None:
        raise FieldError(f"{text!r} is not a duration", f"{fix}, e.g. 90s or 15m")
    seconds = float(int(found.group(1)) * _UNIT_S[found.group(2) or "s"])
    if not low_s <= seconds <= high_s:
        raise FieldError(f"{text!r} is out of range", fix)
    return seconds
