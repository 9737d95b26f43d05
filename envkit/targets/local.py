"""local://: this machine, with a chosen Python."""

from __future__ import annotations

import subprocess
from pathlib import Path

from envkit.errors import EngineUnreachableError
from envkit.targets.base import CommandResult


class LocalTarget:
    def __init__(self, name: str = "local://") -> None:
        self.name = name

    def put(self, data: bytes, remote_path: str) -> None:
        Path(remote_path).parent.mkdir(parents=True, exist_ok=True)
        Path(remote_path).write_bytes(data)

    def run(self, argv: list[str], timeout: float) -> CommandResult:
        try:
            done = subprocess.run(
                argv, capture_output=True, text=True, timeout=timeout, check=False
            )
        except FileNotFoundError:
            raise EngineUnreachableError(
                f"{argv[0]} not found on this machine",
                "pass --python with an interpreter that has torch",
            ) from None
        return CommandResult(done.returncode, done.stdout, done.stderr)

    def get(self, remote_path: str) -> bytes:
        return Path(remote_path).read_bytes()

    def close(self) -> None:
        pass
