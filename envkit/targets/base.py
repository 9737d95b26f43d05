"""What every target offers: put files, run a command, and say what happened to it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from envkit.errors import EngineUnreachableError


@dataclass(frozen=True)
class TargetOptions:
    """What a transport may need beyond its URL (only the image transport uses these today)."""

    gpus: bool = False
    shm_size: str | None = None
    run_id: str = "throwaway"  # labels what a run creates, so one abandoned is found


@dataclass(frozen=True)
class CommandResult:
    exit_code: int
    stdout: str
    stderr: str


class TargetDeadlineError(EngineUnreachableError):
    """A call to the target did not return within its deadline (the target hung or was frozen)."""


class Target(Protocol):
    """Where checks run. One small module per kind, chosen by URL scheme in targets/__init__. Every
    call returns within its deadline or raises an EnvkitError: none may hang. The transports
    subclass it for the defaults of a host (no image, no notes, nothing to diagnose or close)."""

    name: str  # as the user wrote it, e.g. docker://vision-lab

    @property
    def image_id(self) -> str | None:
        """The image the target runs (docker and image targets): history compares runs by it.
        None where the transport cannot tell (a host over SSH, this machine)."""
        return None

    @property
    def notes(self) -> list[str]:
        """What the transport had to do differently (e.g. no GPUs on this engine), for the
        report's environment."""
        return []

    @property
    def timeout_scale(self) -> float:
        """How much slower than native the checks run here (an image of another architecture,
        run under emulation): every check's and the suite's timeout is stretched by it."""
        return 1.0

    def put(self, data: bytes, remote_path: str) -> None: ...

    def run(self, argv: list[str], timeout: float) -> CommandResult: ...

    def diagnose(self) -> EngineUnreachableError | None:
        """What happened to the target itself when a call failed (paused, stopped, killed,
        removed), with its fix; None when the transport cannot tell or nothing did."""
        return None

    def close(self) -> None:
        return None
