"""envkit.lock: the text format, and what differs between a lock and what is installed now.

Standard library only and Python 3.8, like the rest of this package: the `system.lock` check
parses the lock inside the target, and envkit writes and reads the same format on the host.

The format (docs/lock.md) is made for diffs and review: `schema N`, then `[section]` blocks of
one entry per line, whitespace-separated tokens, every section sorted by its first token.
Lines starting with `#` are comments, skipped when read."""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

LOCK_SCHEMA = 1
# Section -> how many tokens an entry has after its key (the first token).
SECTIONS = {"base": 1, "requested": 0, "torch": 1, "apt": 2, "conda": 2, "pip": 3}
# Sections that describe what is installed; [base] and [requested] describe where it came from.
STATE_SECTIONS = ("torch", "apt", "conda", "pip")
# Where a locked image carries its lock (the system.lock check reads it there).
IMAGE_LOCK_PATH = "/etc/envkit/envkit.lock"

Entries = Dict[str, Tuple[str, ...]]
Lock = Dict[str, Entries]


class LockFormatError(ValueError):
    """The text is not an envkit.lock this version can read; the message names the line."""


def empty_lock() -> Lock:
    return {name: {} for name in SECTIONS}


def format_lock(lock: Lock, comments: Tuple[str, ...] = ()) -> str:
    lines = [f"# {comment}" for comment in comments]
    lines.append(f"schema {LOCK_SCHEMA}")
    for section in SECTIONS:
        lines += ["", f"[{section}]"]
        for key in sorted(lock.get(section, {})):
            values = lock[section][key]
            for token in (key, *values):
                if not token or any(ch.isspace() for ch in token):
                    raise LockFormatError(f"[{section}] {key}: {token!r} is not one token")
            lines.append(" ".join((key, *values)))
    return "\n".join(lines) + "\n"


def _entry(section: str, number: int, line: str) -> Tuple[str, Tuple[str, ...]]:
    tokens = line.split()
    if len(tokens) != 1 + SECTIONS[section]:
        raise LockFormatError(
            f"line {number}: [{section}] entries have {1 + SECTIONS[section]} fields, "
            f"this one has {len(tokens)}: {line!r}"
        )
    return tokens[0], tuple(tokens[1:])


def parse_lock(text: str, lines: Optional[Dict[Tuple[str, str], int]] = None) -> Lock:
    """The lock in `text`; `lines`, when given, gets each entry's line number (what a refusal
    of the entry names)."""
    lock = empty_lock()
    section: Optional[str] = None
    schema_seen = False
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if not schema_seen:
            _schema(number, line)
            schema_seen = True
        elif line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
            if section not in SECTIONS:
                raise LockFormatError(f"line {number}: unknown section [{section}]")
        elif section is None:
            raise LockFormatError(f"line {number}: an entry before any [section]: {line!r}")
        else:
            _add(lock, section, number, line, lines)
    if not schema_seen:
        raise LockFormatError("the file is empty: no 'schema' line")
    return lock


def _schema(number: int, line: str) -> None:
    if line != f"schema {LOCK_SCHEMA}":
        raise LockFormatError(
            f"line {number}: expected 'schema {LOCK_SCHEMA}', found {line!r} "
            "(a lock from another envkit version: run `envkit lock` again)"
        )


def _add(
    lock: Lock, section: str, number: int, line: str, lines: Optional[Dict[Tuple[str, str], int]]
) -> None:
    key, values = _entry(section, number, line)
    if key in lock[section]:
        raise LockFormatError(f"line {number}: [{section}] {key} appears twice")
    lock[section][key] = values
    if lines is not None:
        lines[(section, key)] = number


# ------------------------------------------------------------------------------------ drift

Change = Tuple[str, str, str, str]  # section, name, locked value, value now ("-" for none)


def drift(locked: Lock, now: Lock) -> List[Change]:
    """Every installed thing that differs, section by section, sorted."""
    changes: List[Change] = []
    for section in STATE_SECTIONS:
        before, after = locked.get(section, {}), now.get(section, {})
        for name in sorted(set(before) | set(after)):
            # What identifies an installed thing, its first value: apt/pip versions, conda
            # version-build, torch facts (apt's origin and pip's installer/hashes say where it
            # came from, not what it is).
            old = before[name][0] if name in before else "-"
            new = after[name][0] if name in after else "-"
            if old != new:
                changes.append((section, name, old, new))
    return changes


def is_addition(change: Change) -> bool:
    section, _, old, new = change
    return section != "torch" and old == "-" and new != "-"


def describe(changes: List[Change], limit: int = 8) -> str:
    parts = []
    for section, name, old, new in changes[:limit]:
        if old == "-":
            parts.append(f"{section} {name} {new} added")
        elif new == "-":
            parts.append(f"{section} {name} {old} removed")
        else:
            parts.append(f"{section} {name} {old} -> {new}")
    more = len(changes) - limit
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")
