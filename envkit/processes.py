"""Programs asked a question on the side (squeue, ssh -G, docker buildx version): run quietly,
bounded, and an answer or none, never an exception.

May import: nothing."""

from __future__ import annotations

import subprocess


def quiet_output(argv: list[str], timeout: float, env: dict[str, str] | None = None) -> str | None:
    """ARGV's stdout, or None where it cannot start, runs past TIMEOUT or exits non-zero."""
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=timeout, check=False, env=env
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None
