"""An envkit.lock turned into what `envkit build --locked` renders: the base by digest, apt
packages at their versions, the conda environment as an explicit list, pip packages pinned
(with their sums where the lock has them). Refuses a lock that does not fit envkit.yaml or
whose base has changed under the same name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from envkit.checks.programs.lockfile import Lock, LockFormatError, parse_lock
from envkit.checks.programs.lockstate import INDEX_INSTALLERS
from envkit.errors import EnvkitError
from envkit.files import read_utf8
from envkit.lock.requested import check_matches
from envkit.lock.validate import OFFICIAL_CONDA, problems
from envkit.plan import Plan
from envkit.plan.models.plan import LockedPlan

LOCK_LIMIT = 32 * 1024 * 1024  # a lock of a large CUDA image is well under 1 MB
SHOWN = 10  # refusals listed at once


def read_lock(path: Path, conda_prefixes: tuple[str, ...] | None = None) -> tuple[Lock, str]:
    """The lock at `path`, every entry checked to be what its section says (lock/validate.py):
    a regular file under a size cap, UTF-8, envkit's format. `conda_prefixes`, when given, are
    the channel URLs a locked build may fetch conda packages from."""
    if not path.exists():
        raise EnvkitError(
            f"--locked: {path} does not exist", "run `envkit build` then `envkit lock` to make it"
        )
    text, bad_line = read_utf8(path, LOCK_LIMIT, "lock file")
    if text is None:
        raise EnvkitError(f"{path}:{bad_line}: not UTF-8", "run `envkit lock` again to rewrite it")
    lines: dict[tuple[str, str], int] = {}
    try:
        lock = parse_lock(text, lines)
    except LockFormatError as exc:
        raise EnvkitError(f"{path}: {exc}", "run `envkit lock` again to rewrite it") from None
    found = problems(lock, conda_prefixes)
    if found:
        listed = "\n".join(
            f"{path}:{lines.get((p.section, p.key), '?')}: {p.problem}" for p in found[:SHOWN]
        )
        more = f"\n(and {len(found) - SHOWN} more)" if len(found) > SHOWN else ""
        raise EnvkitError(
            f"{path} holds entries that are not what their section says:\n{listed}{more}",
            f"{found[0].fix}; a lock is data, never options: `envkit lock` writes it again",
        )
    return lock, text


def conda_prefixes(plan: Plan) -> tuple[str, ...]:
    """The URLs a locked build may fetch conda packages from: conda's own channels and every
    channel the configured mirror serves."""
    rc = plan.conda.rc
    routed = tuple(f"{base}/{name}" for name, base in rc.custom_channels)
    return (*OFFICIAL_CONDA, *rc.default_channels, *routed)


def check_base(lock: Lock, client: Any, path: Path, by_id: bool = False) -> None:
    """A base with no registry digest (or, BY_ID, any base: an offline build's, loaded from a
    bundle) is pinned by its id: the same name must still be it."""
    if not by_id and lock["base"].get("digest", ("-",))[0] != "-":
        return  # FROM name@digest: the engine fetches exactly that
    from envkit.engine.client import require_image

    name, locked_id = lock["base"]["image"][0], lock["base"]["id"][0]
    now = require_image(
        client,
        name,
        "load or import that image again (it came from no registry, so it cannot be pulled)",
        what=f"the locked base ({locked_id})",
    ).id
    if now != locked_id:
        raise EnvkitError(
            f"the base {name} is now {now}, but {path} was made on {locked_id}",
            "restore that base image, or run `envkit build` then `envkit lock` to lock the new one",
        )


def check_platforms(lock: Lock, platforms: tuple[str, ...], path: Path) -> None:
    """A lock holds one platform's packages (its base's dpkg architecture): a locked build
    builds that platform, and only it."""
    from envkit.platforms import architecture, known

    arch = lock["base"].get("arch", ("-",))[0]
    if len(platforms) > 1:
        raise EnvkitError(
            f"{path} holds one platform's packages ({arch}); this build is for "
            f"{', '.join(platforms)}",
            "lock and build each platform on its own: `envkit lock --platform P --lock-file "
            "envkit.ARCH.lock`, then `envkit build --locked --platform P --lock-file ...`",
        )
    if arch == "-" or not known(arch):
        return  # a lock made before locks named their architecture: the build checks the rest
    wanted = architecture(platforms[0])
    if architecture(arch).arch != wanted.arch:
        raise EnvkitError(
            f"{path} was made from a linux/{arch} image; this build is for {wanted.platform}",
            f"lock the {wanted.platform} image (`envkit lock --platform {wanted.platform}`), or "
            f"build --platform linux/{arch}",
        )


def apt_pins(lock: Lock) -> tuple[str, ...]:
    """NAME=VERSION of each apt package the image added to its base (NAME:ARCH where foreign)."""
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
        if installer not in INDEX_INSTALLERS:
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
    unisolated = [p.requirement for p in plan.packages.pip_own if p.no_build_isolation]
    if unisolated:
        # The lock's pins install in one command, torch among them: a package that must build
        # against an installed torch cannot be among them.
        raise EnvkitError(
            f"{', '.join(unisolated)} builds without isolation, against the installed torch; "
            "a locked build installs every pin in one step, so it cannot",
            "build without --locked (the image's own layers pin torch and build it after)",
        )
    conda = tuple(values[1] for _, values in sorted(lock["conda"].items()) if values[1] != "-")
    pip, hashed = _pip_pins(lock)
    digest = lock["base"].get("digest", ("-",))[0]  # FROM by digest, else by name
    return LockedPlan(
        base=digest if digest != "-" else lock["base"].get("image", ("-",))[0],
        apt=apt_pins(lock),
        conda_explicit=conda,
        pip=pip,
        pip_hashed=hashed,
        lock_text=text,
    )
