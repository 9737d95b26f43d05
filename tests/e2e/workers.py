"""The engine's tests on several pytest-xdist workers at once (`make test` runs two).

Each test file runs whole on one worker (`--dist loadfile`), so a file's own project names stay
its own. What several files use is made per worker: the e2e project's name (and with it its image
tag, containers and volumes) and every fixed host port, shifted by the worker's number. What all
workers only read (the base images) is made once per machine, under a lock, and kept by tag."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")  # "gw0", "gw1"; "" in a plain run
_NUMBER = int(WORKER[2:]) if WORKER.startswith("gw") and WORKER[2:].isdigit() else 0

# Fixed ports lie in 18600..20400 (a team's members get ports up to 1,000 above its base), so
# a shift of 2,000 per worker keeps every worker's ports apart from every other's.
PORT_SHIFT = 2000


def port(number: int) -> int:
    """This worker's copy of a fixed host port (one of 18600..19600: with a team's members above
    it, every worker's ports stay apart from every other's)."""
    assert 18600 <= number <= 19600, f"fixed port {number} is outside 18600..19600"
    return number + PORT_SHIFT * _NUMBER


def own_name(name: str) -> str:
    """This worker's copy of a name that several test files use (a project, a tag's repo)."""
    return f"{name}-{WORKER}" if WORKER else name


LOCKS = Path("/tmp/envkit-test-locks")


@contextmanager
def made_once(what: str) -> Iterator[None]:
    """Hold WHAT's machine-wide lock: the first worker makes the thing, the others wait, then
    find it made (each caller checks for it again inside the lock)."""
    LOCKS.mkdir(parents=True, exist_ok=True)
    with (LOCKS / f"{what}.lock").open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(held, fcntl.LOCK_UN)
