"""Build the rendered context through the docker SDK, reporting progress step by step.

A failed build raises BuildFailedError naming the failing Dockerfile step, the last lines of its
log, and a hint where the failure is a known one (an unreachable mirror, a missing package)."""

from __future__ import annotations

import re
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envkit.errors import BuildFailedError

STEP = re.compile(r"^Step (\d+)/(\d+) : (.*)$")
HINTS: list[tuple[re.Pattern[str], str]] = [
    (
        re.compile(r"Version '([^']+)' for '([^']+)' was not found"),
        "the lock pins {1} {0}, which the apt mirror no longer serves: rebuild without --locked "
        "and `envkit lock` again, or point mirrors.apt at a snapshot archive (docs/lock.md)",
    ),
    (
        re.compile(r"THESE PACKAGES DO NOT MATCH THE HASHES"),
        "a file on the pip index no longer matches the sum in envkit.lock: find out why before "
        "trusting it; `envkit lock` again only if the new file is known good",
    ),
    (
        re.compile(r"Unable to locate package (\S+)"),
        "apt has no package named {0}: check the name in packages.apt (`apt-cache search`)",
    ),
    (
        re.compile(r"No matching distribution found for (\S+)"),
        "pip found no {0} on the index: check the name and version in packages.pip, or the mirror",
    ),
    (
        re.compile(
            r"(Could not resolve host|Temporary failure resolving|Failed to fetch|"
            r"Connection timed out|Could not connect to|Max retries exceeded)[^\n]*"
        ),
        "a mirror did not answer: try another mirrors.preset (e.g. tuna, ustc, official), or "
        "runtime.build_network: host behind a proxy",
    ),
    (
        re.compile(r"CERTIFICATE_VERIFY_FAILED|certificate verify failed"),
        "TLS interception? add the proxy's CA to mirrors.ca_certificates",
    ),
    (
        re.compile(r"NO_PUBKEY ([0-9A-F]+)"),
        "apt lacks key {0}: the CUDA repo key rotated; cuda-repo.sh replaces stale lists",
    ),
]


@dataclass
class BuildProgress:
    """What the build stream said, step by step."""

    total: int = 0
    step: int = 0
    instruction: str = ""
    cached: set[int] = field(default_factory=set)
    started: float = field(default_factory=time.monotonic)
    step_started: float = field(default_factory=time.monotonic)
    log: deque[str] = field(default_factory=lambda: deque(maxlen=40))
    image_id: str | None = None


Reporter = Callable[[str, BuildProgress, str], None]  # (event, progress, text)


def hint_for(log: Iterable[str]) -> str | None:
    text = "\n".join(log)
    for pattern, hint in HINTS:
        found = pattern.search(text)
        if found:
            return hint.format(*found.groups())
    return None


def follow(stream: Iterable[dict[str, Any]], report: Reporter) -> BuildProgress:
    """Consume the engine's build stream; raise BuildFailedError on an error event."""
    progress = BuildProgress()
    for chunk in stream:
        if "error" in chunk:
            _fail(progress, str(chunk.get("error", "")))
        if "aux" in chunk and isinstance(chunk["aux"], dict) and "ID" in chunk["aux"]:
            progress.image_id = chunk["aux"]["ID"]
        for line in str(chunk.get("stream", "")).splitlines():
            _line(progress, line.rstrip(), report)
    report("done", progress, "")
    return progress


def _line(progress: BuildProgress, line: str, report: Reporter) -> None:
    step = STEP.match(line)
    if step:
        progress.step, progress.total = int(step.group(1)), int(step.group(2))
        progress.instruction = step.group(3)
        progress.step_started = time.monotonic()
        progress.log.clear()
        report("step", progress, progress.instruction)
    elif line.strip() == "---> Using cache":
        progress.cached.add(progress.step)
        report("cached", progress, "")
    elif line.startswith("Successfully built "):
        progress.image_id = progress.image_id or line.split()[-1]
    elif line.strip() and not line.startswith((" ---> ", "Removing intermediate container")):
        progress.log.append(line)
        report("output", progress, line)


def _fail(progress: BuildProgress, error: str) -> None:
    lines = list(progress.log)[-15:]
    where = (
        f"step {progress.step}/{progress.total}: {progress.instruction}"
        if progress.step
        else "before step 1"
    )
    hint = hint_for([*lines, error])
    message = f"the build failed at {where}\n  {error.strip()}"
    if lines:
        message += "\n  last lines of its log:\n" + "\n".join(f"    | {ln}" for ln in lines)
    raise BuildFailedError(
        message, hint or "fix the step above in envkit.yaml, then `envkit build`"
    )


def build_image(
    client: Any,
    context: Path,
    tag: str,
    *,
    report: Reporter,
    no_cache: bool = False,
    build_args: dict[str, str] | None = None,
    network: str | None = None,
    labels: dict[str, str] | None = None,
) -> BuildProgress:
    stream = client.api.build(
        path=str(context),
        tag=tag,
        rm=True,
        forcerm=True,
        decode=True,
        nocache=no_cache,
        buildargs=build_args or {},
        network_mode=network,
        labels=labels or {},
    )
    try:
        return follow(stream, report)
    finally:
        close = getattr(stream, "close", None)
        if close is not None:
            close()
