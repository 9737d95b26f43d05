"""An envkit.lock turned into what `envkit build --locked` renders: the base by digest, apt
packages at their versions, the conda environment as an explicit list, pip packages pinned
(with their sums where the lock has them). Refuses a lock that does not fit envkit.yaml or
whose base has changed under the same name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from envkit.checks.lockfile import Lock, LockFormatError, parse_lock
from envkit.errors import EnvkitError
from envkit.lock.requested import check_matches
from envkit.plan import Plan
from envkit.plan.locked import LockedPlan


def read_lock(path: Path) -> tuple[Lock, str]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise EnvkitError(
            f"--locked: {path} does not exist", "run `envkit build` then `envkit lock` to make it"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise EnvkitError(f"{path} cannot be read: {exc}", "run `envkit lock` again") from None
    try:
        return parse_lock(text), text
    except LockFormatError as exc:
        raise EnvkitError(f"{path}: {exc}", "run `envkit lock` again to rewrite it") from None


def _base_line(lock: Lock) -> str:
    name = lock["base"].get("image", ("-",))[0]
    digest = lock["base"].get("digest", ("-",))[0]
    return digest if digest != "-" else name


def check_base(lock: Lock, client: Any, path: Path) -> None:
    """A base with no registry digest is pinned by its id: the same name must still be it."""
    if lock["base"].get("digest", ("-",))[0] != "-":
        return  # FROM name@digest: the engine fetches exactly that
    from docker.errors import ImageNotFound

    name, locked_id = lock["base"]["image"][0], lock["base"]["id"][0]
    try:
        now = client.images.get(name).id
    except ImageNotFound:
        raise EnvkitError(
            f"the locked base {name} ({locked_id}) is not on this engine",
            "load or import that image again (it came from no registry, so it cannot be pulled)",
        ) from None
    if now != locked_id:
        raise EnvkitError(
            f"the base {name} is now {now}, but {path} was made on {locked_id}",
            "restore that base image, or run `envkit build` then `envkit lock` to lock the new one",
        )


def _apt_pins(lock: Lock) -> tuple[str, ...]:
    arch = lock["base"].get("arch", ("-",))[0]
    pins = []
    for key, (version, origin) in sorted(lock["apt"].items()):
        if origin != "added":
            continue
        name, _, pkg_arch = key.partition(":")
        spelled = name if pkg_arch in (arch, "all") else key
        pins.append(f"{spelled}={version}")
    return tuple(pins)


def _pip_pins(lock: Lock) -> tuple[tuple[str, ...], bool]:
    lines, hashed = [], True
    for name, (version, installer, sums) in sorted(lock["pip"].items()):
        if installer != "pip":
            continue  # apt's or conda's packages come back with apt and conda
        line = f"{name}=={version}"
        if sums.startswith("sha256:"):
            line += "".join(f" --hash={digest}" for digest in sums.split(","))
        else:
            hashed = False
        lines.append(line)
    return tuple(lines), hashed and bool(lines)


def locked_plan(lock: Lock, text: str, plan: Plan, path: Path) -> LockedPlan:
    check_matches(lock["requested"], plan, str(path))
    conda = tuple(values[1] for _, values in sorted(lock["conda"].items()) if values[1] != "-")
    pip, hashed = _pip_pins(lock)
    return LockedPlan(
        base=_base_line(lock),
        apt=_apt_pins(lock),
        conda_explicit=conda,
        pip=pip,
        pip_hashed=hashed,
        lock_text=text,
    )
