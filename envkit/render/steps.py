"""A rendered Dockerfile's steps, each with a cache key: what the instruction says, and for COPY
the bytes it copies from the build context, chained to the step before (as the builders' own
cache is: a step is reused only when it and everything before it are unchanged). A build
labels its image with the keys; `envkit build --dry-run` compares a new render's keys with the
image the engine has and says which steps would come from the cache and which would run."""

from __future__ import annotations

import hashlib
import json
import re
import shlex
from dataclasses import dataclass
from itertools import takewhile

STEPS_LABEL = "io.envkit.steps"  # the keys of the image's steps, in order (short hex)
KEY_CHARS = 16
COPY = re.compile(r"^(COPY|ADD)\s+(.*)$", re.S)


@dataclass(frozen=True)
class Step:
    number: int
    instruction: str  # one line, continuations joined
    key: str


def instructions(dockerfile: str) -> list[str]:
    """The Dockerfile's instructions, each on one line, comments and parser lines left out."""
    found, current = [], ""
    for raw in dockerfile.splitlines():
        line = raw.strip()
        if line.startswith("#") or not (current or line):  # a comment (in a continued
            continue  # instruction too), a blank line between instructions
        if line.endswith("\\"):
            current += line[:-1].strip() + " "
            continue
        current += line
        found.append(" ".join(current.split()))
        current = ""
    if current.strip():
        found.append(" ".join(current.split()))
    return found


def _sources(instruction: str) -> list[str]:
    """COPY's sources in the context (JSON form or words), its flags and target left out."""
    body = COPY.match(instruction)
    if body is None:
        return []
    rest = body.group(2).strip()
    words = [str(w) for w in json.loads(rest)] if rest.startswith("[") else shlex.split(rest)
    return [w for w in words if not w.startswith("--")][:-1]


def _content(files: dict[str, str], source: str) -> str:
    """The context's files under SOURCE (a file or a folder), hashed in order."""
    prefix = source.rstrip("/")
    digest = hashlib.sha256()
    for path in sorted(files):
        if path == prefix or path.startswith(prefix + "/"):
            digest.update(path.encode() + b"\0" + files[path].encode() + b"\0")
    return digest.hexdigest()


def steps(dockerfile: str, files: dict[str, str]) -> list[Step]:
    """Every instruction but FROM's own metadata is a step with a key chained to the last."""
    found, previous = [], ""
    for number, instruction in enumerate(instructions(dockerfile), 1):
        digest = hashlib.sha256(previous.encode() + b"\0" + instruction.encode())
        for source in _sources(instruction):
            digest.update(_content(files, source).encode())
        key = digest.hexdigest()[:KEY_CHARS]
        found.append(Step(number, instruction, key))
        previous = key
    return found


def label(found: list[Step]) -> str:
    return ",".join(step.key for step in found)


def reused(found: list[Step], labelled: str | None) -> int:
    """How many leading steps an image labelled LABELLED already has: those a build reuses."""
    if not labelled:
        return 0
    pairs = zip(found, labelled.split(","), strict=False)
    return len(list(takewhile(lambda pair: pair[0].key == pair[1], pairs)))
