"""Verify many targets at once: a bounded pool of workers, a deadline per target, and a target
that is down (or fails in any way) recorded as unreachable without stopping the others.
The CLI imports this module at start-up (for DEFAULT_PARALLEL), so its imports are deferred."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envkit.errors import EnvkitError

DEFAULT_PARALLEL = 4


@dataclass(frozen=True)
class Outcome:
    target: str
    report: dict[str, Any] | None  # None: unreachable, see `problem`
    problem: str | None
    seconds: float  # wall time envkit spent on this target, connection included


def read_targets_file(path: Path) -> list[str]:
    """One target URL per line; blank lines and '#' comments are ignored."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise EnvkitError(
            f"--targets {path}: cannot read it ({exc.__class__.__name__})",
            "give a text file with one docker://NAME or ssh://USER@HOST:PORT per line",
        ) from None
    urls = []
    for number, line in enumerate(lines, 1):
        text = line.split("#", 1)[0].strip()
        if text:
            check_url(text, f"{path}:{number}")
            urls.append(text)
    if not urls:
        raise EnvkitError(f"--targets {path}: no targets in it", "add one URL per line")
    return urls


def check_url(url: str, where: str = "--target") -> None:
    """Refuse a malformed target before anything runs anywhere."""
    from envkit.targets import TARGETS

    scheme, sep, rest = url.partition("://")
    if not sep or scheme not in TARGETS or (scheme != "local" and not rest):
        raise EnvkitError(
            f"{where}: {url!r} is not a target",
            "use local://, docker://CONTAINER or ssh://USER@HOST[:PORT]",
        )


def verify_many(
    urls: list[str], run_one: Callable[[str], dict[str, Any]], parallel: int
) -> list[Outcome]:
    """Run `run_one` on every URL with at most `parallel` at a time; outcomes in input order."""
    if parallel < 1:
        raise EnvkitError(f"--parallel {parallel}: must be at least 1", "use --parallel 4")
    unique = list(dict.fromkeys(urls))  # the same target twice would race with itself

    def guarded(url: str) -> Outcome:
        started = time.monotonic()
        try:
            report = run_one(url)
        except EnvkitError as exc:
            return Outcome(url, None, str(exc), time.monotonic() - started)
        except Exception as exc:  # one broken target must not stop the others
            problem = f"{exc.__class__.__name__}: {exc}"
            return Outcome(url, None, problem, time.monotonic() - started)
        return Outcome(url, report, None, time.monotonic() - started)

    if len(unique) <= 1:  # nothing (only --image) or one target: no pool needed
        return [guarded(url) for url in unique]
    from concurrent.futures import ThreadPoolExecutor

    pool = ThreadPoolExecutor(max_workers=min(parallel, len(unique)))
    try:
        futures = [pool.submit(guarded, url) for url in unique]
        return [future.result() for future in futures]
    except KeyboardInterrupt:
        # Ctrl-C: start nothing more and do not wait for targets still running (the CLI leaves
        # at once; their suites end by their own deadline inside the target).
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    finally:
        pool.shutdown(wait=False)
