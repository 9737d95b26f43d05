"""local://: this machine, with a chosen Python."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

from envkit.errors import EngineUnreachableError
from envkit.targets.base import CommandResult, Target, TargetDeadlineError


class LocalTarget(Target):
    def __init__(self, name: str = "local://") -> None:
        self.name = name

    def put(self, data: bytes, remote_path: str) -> None:
        Path(remote_path).parent.mkdir(parents=True, exist_ok=True)
        Path(remote_path).write_bytes(data)

    def run(self, argv: list[str], timeout: float) -> CommandResult:
        try:
            # Its own session, so a deadline ends the whole process group (DDP ranks included).
            process = subprocess.Popen(
                argv,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                stdin=subprocess.DEVNULL,
                text=True,
                start_new_session=True,
            )
        except FileNotFoundError:
            raise EngineUnreachableError(
                f"{argv[0]} not found on this machine",
                "pass --python with an interpreter that has torch",
            ) from None
        try:
            out, err = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            raise TargetDeadlineError(
                f"{self.name}: the checks did not finish within {timeout:.0f}s",
                "raise --target-timeout, or look for a hung GPU or collective",
            ) from None
        except KeyboardInterrupt:
            os.killpg(process.pid, signal.SIGKILL)
            raise
        return CommandResult(process.returncode, out, err)
