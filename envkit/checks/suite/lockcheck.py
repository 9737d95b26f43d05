"""system.lock: the target against the lock its image was built from (`envkit build --locked`
ships it at /etc/envkit/envkit.lock)."""

from __future__ import annotations

import os

from ..core.context import Context
from ..core.registry import Skip, check, ensure
from ..programs.lockfile import (
    IMAGE_LOCK_PATH,
    LockFormatError,
    describe,
    drift,
    is_addition,
    parse_lock,
)
from ..programs.lockstate import capture


@check(
    "system.lock",
    needs_torch=False,
    reference="the versions recorded in the image's envkit.lock when it was built",
)
def lock(ctx: Context) -> str:
    """Catches drift from the image's lock: a package changed, removed or torch swapped
    since the build (additions are listed, not failed)."""
    path = str(ctx.lock_path or IMAGE_LOCK_PATH)
    if not os.path.isfile(path):
        raise Skip(f"no lock at {path}: build with `envkit lock` then `envkit build --locked`")
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    try:
        locked = parse_lock(text)
    except LockFormatError as exc:
        raise AssertionError(f"{path} cannot be read: {exc}") from None
    prefix = locked["base"].get("conda-prefix", ("-",))[0]
    now, _ = capture(None if prefix == "-" else prefix)
    changes = drift(locked, now)
    kept = [change for change in changes if not is_addition(change)]
    ctx.metric("lock_changes", float(len(kept)), "count")
    ctx.metric("lock_additions", float(len(changes) - len(kept)), "count")
    ensure(not kept, f"{len(kept)} changed since the lock: {describe(kept)}")
    counted = sum(len(locked[section]) for section in ("apt", "conda", "pip"))
    added = [change for change in changes if is_addition(change)]
    note = f"; {len(added)} added since: {describe(added, 5)}" if added else ""
    return f"{counted} locked packages as built{note}"
