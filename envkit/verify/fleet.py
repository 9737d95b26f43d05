"""Verify many targets at once: a bounded pool of workers, a deadline per target, and a target
that is down (or fails in any way) recorded as unreachable without stopping the others."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from envkit.errors import EnvkitError

R = TypeVar("R")  # what one target's run gives (a TargetReport in envkit verify)


@dataclass(frozen=True)
class Outcome(Generic[R]):
    target: str
    report: R | None  # None: unreachable, see `problem`
    problem: str | None
    seconds: float  # wall time envkit spent on this target, connection included


GRACE_S = 20.0  # the client-side deadline per target: --target-timeout plus this
POLL_S = 0.05  # how often the run looks for finished targets


def verify_many(
    urls: list[str], run_one: Callable[[str], R], parallel: int, deadline: float | None = None
) -> list[Outcome[R]]:
    """Run `run_one` on every URL with at most `parallel` at a time; outcomes in input order.
    A target that has not finished `deadline` seconds after it started is recorded as
    unreachable and abandoned (its worker is a daemon thread, replaced by a fresh one), so the
    whole run ends however a target behaves: paused, frozen, or a peer that stops answering."""
    if parallel < 1:
        raise EnvkitError(f"--parallel {parallel}: must be at least 1", "use --parallel 4")
    unique = list(dict.fromkeys(urls))  # the same target twice would race with itself
    if not unique:
        return []
    pool = _DeadlinePool(unique, run_one, deadline)
    for _ in range(min(parallel, len(unique))):
        pool.add_worker()
    return pool.wait()


class _DeadlinePool(Generic[R]):
    def __init__(
        self, urls: list[str], run_one: Callable[[str], R], deadline: float | None
    ) -> None:
        self.urls = urls
        self.run_one = run_one
        self.deadline = deadline
        self.pending = list(reversed(urls))
        self.started: dict[str, float] = {}
        self.done: dict[str, Outcome[R]] = {}
        self.lock = threading.Lock()

    def add_worker(self) -> None:
        threading.Thread(target=self._work, daemon=True, name="envkit-verify").start()

    def _work(self) -> None:
        while True:
            with self.lock:
                if not self.pending:
                    return
                url = self.pending.pop()
                self.started[url] = time.monotonic()
            outcome = _guarded(url, self.run_one)
            with self.lock:
                if url in self.done:  # already given up on: this worker was replaced
                    return
                self.done[url] = outcome

    def wait(self) -> list[Outcome[R]]:
        """Until every target has an outcome. It polls, briefly holding the lock, rather than
        waiting on a Condition: Ctrl-C can land while Condition.wait takes its lock back, which
        leaves the lock unheld and turns the interrupt into "cannot release un-acquired lock"
        (exit 1, not 130). A sleep is interrupted cleanly."""
        while True:
            with self.lock:
                self._expire()
                if len(self.done) >= len(self.urls):
                    return [self.done[url] for url in self.urls]
            time.sleep(POLL_S)

    def _expire(self) -> None:
        if self.deadline is None:
            return
        now = time.monotonic()
        for url, began in self.started.items():
            if url not in self.done and now - began > self.deadline:
                self.done[url] = Outcome(
                    url,
                    None,
                    f"{url} gave no result within {self.deadline:.0f}s "
                    f"(--target-timeout + {GRACE_S:.0f}s grace): it hung and was abandoned",
                    now - began,
                )
                self.add_worker()  # the stuck worker is lost; keep the parallelism


def _guarded(url: str, run_one: Callable[[str], R]) -> Outcome[R]:
    started = time.monotonic()
    try:
        report = run_one(url)
    except EnvkitError as exc:
        return Outcome(url, None, str(exc), time.monotonic() - started)
    except Exception as exc:  # one broken target must not stop the others
        problem = f"{exc.__class__.__name__}: {exc}"
        return Outcome(url, None, problem, time.monotonic() - started)
    return Outcome(url, report, None, time.monotonic() - started)
