"""`envkit build --offline --from BUNDLE`: the image rebuilt from a bundle's files alone.

The bundle is checked against its manifest (and the team's key) first; its envkit.lock pins
every version, as `build --locked` does; its wheels/ and debs/ are staged in the build context
and bound into every RUN that installs (plan/image/install.py's OFFLINE: pip and uv with
--no-index, apt with the bundle's flat repository as its only source). The build's RUN steps
get no network at all (`--network none`), so nothing can come from anywhere but the bundle,
whatever the machine can reach."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from envkit.bundle.manifest import Entry, check_bundle
from envkit.checks.programs.lockfile import Lock
from envkit.errors import EnvkitError
from envkit.files import link_or_copy
from envkit.lock.pins import apt_pins
from envkit.plan import Plan
from envkit.plan.image.install import OFFLINE

LOCK = "envkit.lock"

# apt reads only the bundle's repository, and keeps its lists out of the image and the cache.
APT_CONF = f"""\
Dir::Etc::SourceList "{OFFLINE}/apt/offline.list";
Dir::Etc::SourceParts "{OFFLINE}/apt/parts";
Dir::State::Lists "/tmp/envkit-lists";
Acquire::Languages "none";
"""
SOURCES = f"deb [trusted=yes] file:{OFFLINE}/debs ./\n"  # the manifest vouched for each .deb


def checked_lock(bundle: Path, key: str | None) -> dict[str, Entry]:
    """The bundle checked against its manifest (signed by KEY where set): its files, a lock
    among them."""
    listed = check_bundle(bundle, key)
    if LOCK not in listed:
        raise EnvkitError(f"{bundle} carries no {LOCK}", "make it with `envkit bundle`")
    return listed


def offline_plan(plan: Plan, lock: Lock, bundle: Path, listed: dict[str, Entry]) -> Plan:
    """PLAN (pinned by the bundle's LOCK) to be built from the bundle alone; refused before
    anything is staged or the engine asked."""
    pins = apt_pins(lock)
    if pins and "debs/Packages" not in listed:
        raise EnvkitError(
            f"{bundle} carries no debs/ for the lock's {len(pins)} apt packages (an earlier "
            "envkit made it)",
            "make the bundle again with this envkit: `envkit bundle`",
        )
    if lock["conda"] or plan.conda.bootstrap is not None:
        raise EnvkitError(
            "--offline rebuilds pip and apt environments; this one has conda, whose "
            "installer and solver are not rebuilt from a bundle yet",
            f"load the bundle's image instead: `envkit load {bundle}`",
        )
    assert plan.locked is not None  # pinned by the lock already
    # By name, not digest: an image loaded from an archive has no registry digest, and the
    # build checks its id against the lock's instead (lock/pins.py's check_base).
    locked = replace(plan.locked, base=lock["base"]["image"][0])
    return replace(plan, locked=locked, install=replace(plan.install, offline=True))


def require_buildkit(builder: str) -> None:
    if builder != "buildkit":
        raise EnvkitError(
            f"--offline needs BuildKit: its RUN steps read the bundle through bind mounts, which "
            f"the {builder} builder has not",
            "install docker-buildx (`envkit doctor` says how), or pass --builder buildkit",
        )


@contextmanager
def offline_files(context: Path, bundle: Path) -> Iterator[None]:
    """The bundle's packages and apt's configuration in CONTEXT's envkit/offline/ for one
    build, gone after it however it ends (a later render finds no file it did not write)."""
    staged = context / "envkit" / "offline"
    marker = staged / "apt" / "offline.list"
    if staged.exists() and not (marker.is_file() and marker.read_text() == SOURCES):
        raise EnvkitError(
            f"{staged} holds files envkit did not stage; nothing there is removed",
            "move them out of the build context: `build --offline` stages the bundle there",
        )
    shutil.rmtree(staged, ignore_errors=True)  # a build killed before it could clean up
    try:
        for part in ("wheels", "debs"):
            (staged / part).mkdir(parents=True)
            found = sorted((bundle / part).iterdir()) if (bundle / part).is_dir() else []
            for source in found:
                link_or_copy(source, staged / part / source.name)  # not the image: small
        if not (staged / "debs" / "Packages").exists():  # no .debs: an empty index still serves
            (staged / "debs" / "Packages").write_text("")
        (staged / "apt" / "parts").mkdir(parents=True)
        (staged / "apt" / "apt.conf").write_text(APT_CONF)
        (staged / "apt" / "offline.list").write_text(SOURCES)
        yield
    finally:
        shutil.rmtree(staged, ignore_errors=True)
