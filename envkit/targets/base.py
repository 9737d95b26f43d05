"""What every target offers: put files, run a command, get files."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class CommandResult:
    exit_code: int
    stdout: str
    stderr: str


class Target(Protocol):
    """Where checks run. One small module per kind, chosen by URL scheme in targets/__init__."""

    name: str  # as the user wrote it, e.g. docker://vision-lab

    def put(self, data: bytes, remote_path: str) -> None: ...

    def run(self, argv: list[str], timeout: float) -> CommandResult: ...

    def get(self, remote_path: str) -> bytes: ...

    def close(self) -> None: ...
