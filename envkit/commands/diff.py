"""`envkit diff A B`: what differs between two locks, or a lock and a running target (each side
a lock file or a target URL), as a table; with --layers, which layers and files differ between
two images (two builds of one lock); exit 1 when anything differs, like diff(1)."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

from envkit.checks.core.text import for_terminal
from envkit.checks.programs.lockfile import Change, Lock, drift
from envkit.errors import EnvkitError
from envkit.lock.make import capture_state
from envkit.lock.pins import read_lock


@dataclass(frozen=True, kw_only=True)
class DiffRequest:
    left: str  # a lock file or a target URL
    right: str
    json: bool = False
    layers: bool = False  # LEFT and RIGHT are images: their layers and files


def _conda_prefix(sides: list[Lock]) -> str | None:
    for side in sides:
        prefix = side.get("base", {}).get("conda-prefix", ("-",))[0]
        if prefix != "-":
            return prefix
    return None


def _table(changes: list[Change], left: str, right: str) -> str:
    rows = [("section", "package", left, right), *changes]
    widths = [min(48, max(len(row[i]) for row in rows)) for i in range(4)]
    return "".join(
        "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() + "\n"
        for row in rows
    )


SHOWN_FILES = 12  # per layer; the JSON has them all


def _layers(request: DiffRequest) -> int:
    from dataclasses import asdict

    from envkit.engine.client import docker_client, require_image
    from envkit.supply.image_diff import compare

    client = docker_client()
    for name in (request.left, request.right):
        require_image(client, name, "build or pull it first", what="the image")
    changes = compare(client, request.left, request.right)
    if request.json:
        sys.stdout.write(json.dumps([asdict(change) for change in changes], indent=2) + "\n")
        return 1 if changes else 0
    for change in changes:
        sys.stdout.write(for_terminal(f"layer {change.index} ({change.step or '?'}):\n"))
        for file in change.files[:SHOWN_FILES]:
            sys.stdout.write(for_terminal(f"  {file.path}  {file.what}\n"))
        if len(change.files) > SHOWN_FILES:
            sys.stdout.write(f"  and {len(change.files) - SHOWN_FILES} more files\n")
    said = f"{len(changes)} layers differ" if changes else "the same layers"
    sys.stdout.write(for_terminal(f"{said}: {request.left} and {request.right}\n"))
    return 1 if changes else 0


def run(request: DiffRequest) -> int:
    if request.layers:
        return _layers(request)
    left, right = request.left, request.right
    if "://" not in left and "://" not in right and left == right:
        raise EnvkitError("envkit diff: both sides are the same file", "name two locks or targets")
    files = {spec: read_lock(Path(spec))[0] for spec in (left, right) if "://" not in spec}
    prefix = _conda_prefix(list(files.values()))
    first = files[left] if left in files else capture_state(left, prefix)[0]
    second = files[right] if right in files else capture_state(right, prefix)[0]
    changes = drift(first, second)
    if request.json:
        keys = ("section", "name", "left", "right")
        sys.stdout.write(
            json.dumps([dict(zip(keys, c, strict=True)) for c in changes], indent=2) + "\n"
        )
    elif changes:
        sys.stdout.write(for_terminal(_table(changes, left, right)))
        sys.stdout.write(f"{len(changes)} differences\n")
    else:
        sys.stdout.write(for_terminal(f"no differences between {left} and {right}\n"))
    return 1 if changes else 0
