"""`envkit lock` and `envkit diff`: the typer wiring only (cli.py registers them)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

LockConfig = Annotated[
    str | None,
    typer.Option("--config", "-c", help="envkit.yaml to use (default ./envkit.yaml)."),
]


def lock(
    config: LockConfig = None,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Write here (default envkit.lock).")
    ] = None,
    tag: Annotated[str | None, typer.Option(help="Image to lock (default the built one).")] = None,
) -> None:
    """Lock the built image: base digest, apt, conda, pip (with sums) and torch, in envkit.lock."""
    from envkit.commands.lock import run_lock

    raise typer.Exit(run_lock(config, out, tag))


def diff(
    left: Annotated[str, typer.Argument(help="A lock file or a target URL (docker://NAME, ...).")],
    right: Annotated[str, typer.Argument(help="Another lock file or target URL.")],
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """What differs between two locks, or a lock and a running target (exit 1 if anything)."""
    from envkit.commands.diff import run_diff

    raise typer.Exit(run_diff(left, right, as_json))
