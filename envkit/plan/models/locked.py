"""What a locked build pins, as plain data the Dockerfile lays out (`envkit build --locked`).
envkit/lock/pins.py makes it from an envkit.lock and the plan; render only places it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LockedPlan:
    base: str  # FROM: name@sha256:digest where the base came from a registry, else its name
    apt: tuple[str, ...]  # name=version (name:arch=version for a foreign architecture)
    conda_explicit: tuple[str, ...]  # url#md5 lines of the conda environment, in install order
    pip: tuple[str, ...]  # requirement lines: name==version, with --hash=sha256:... where known
    pip_hashed: bool  # every pip line carries its sums: install with --require-hashes
    lock_text: str  # shipped in the image for the system.lock check
