"""What a container's activity watch (envkit/runtime/activity.py) saw: SSH sessions, notebook
kernels, GPU work and when any was last seen. A running container is asked now
(`envkit-activity peek`); a stopped one's last record is read from its filesystem, which
outlives the stop. Everything read is checked for shape: the container's files are its users'."""

from __future__ import annotations

import io
import json
import tarfile
import time
from typing import Any

from envkit.plan.box.access import ACTIVITY_FILE

PEEK = ["/usr/local/bin/envkit-activity", "peek"]
NUMBERS = (
    "sessions",
    "kernels",
    "busy_kernels",
    "last_active",
    "started",
    "stopped_idle",
    "now",
    "gpu_processes",
)
LIMIT = 64 * 1024


def _clean(raw: object) -> dict[str, Any]:
    """Only the fields envkit reads, each of its type: a record is never trusted whole."""
    if not isinstance(raw, dict):
        return {}
    clean: dict[str, Any] = {}
    for key in NUMBERS:
        value = raw.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
            clean[key] = value
    if isinstance(raw.get("gpu_busy"), bool):
        clean["gpu_busy"] = raw["gpu_busy"]
    return clean


def _peek(container: Any) -> dict[str, Any] | None:
    try:
        result = container.exec_run(PEEK, user="root")
        if result.exit_code != 0:
            return None  # an image from before the watch, or without python3
        return _clean(json.loads(bytes(result.output[:LIMIT]).decode("utf-8", "replace")))
    except Exception:  # the engine's refusal, or an answer that is not JSON
        return None


def _last_record(container: Any) -> dict[str, Any] | None:
    try:
        stream, _ = container.get_archive(ACTIVITY_FILE)
        data = b"".join(stream)
        with tarfile.open(fileobj=io.BytesIO(data[: LIMIT * 4])) as archive:
            member = archive.next()
            handle = archive.extractfile(member) if member and member.isfile() else None
            raw = handle.read(LIMIT) if handle is not None else b""
        return _clean(json.loads(raw.decode("utf-8", "replace")))
    except Exception:
        return None


def activity(container: Any) -> dict[str, Any] | None:
    """The watch's view with `idle_s` added, or None where the container cannot tell."""
    running = container.status == "running"
    seen = _peek(container) if running else _last_record(container)
    if seen is None:
        return None
    if running and "last_active" in seen:
        # the container's clock on both sides: a remote engine's may differ from ours
        now = seen.pop("now", time.time())
        seen["idle_s"] = round(max(0.0, now - seen["last_active"]), 1)
    return seen
