"""`envkit build --offline --from BUNDLE`: the image rebuilt from a bundle's files alone.

The bundle is checked against its manifest (and the team's key) first; its envkit.lock pins
every version, as `build --locked` does; its wheels/, debs/ and conda/ are staged in the build
context and bound into every RUN that installs (plan/image/install.py's OFFLINE: pip and uv
with --no-index, apt with the bundle's flat repository as its only source, envkit-conda with
the bundle's conda files). The build's RUN steps get no network at all (`--network none`), so
nothing can come from anywhere but the bundle, whatever the machine can reach."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from packaging.utils import canonicalize_name, parse_wheel_filename

from envkit.bundle.manifest import Entry
from envkit.checks.programs.lockfile import Lock
from envkit.errors import EnvkitError
from envkit.files import link_or_copy
from envkit.lock.pins import apt_pins
from envkit.plan import Plan
from envkit.plan.image.conda_bootstrap import RATTLER_REQUIREMENTS
from envkit.plan.image.install import OFFLINE

# apt reads only the bundle's repository, and keeps its lists out of the image and the cache.
APT_CONF = f"""\
Dir::Etc::SourceList "{OFFLINE}/apt/offline.list";
Dir::Etc::SourceParts "{OFFLINE}/apt/parts";
Dir::State::Lists "/tmp/envkit-lists";
Acquire::Languages "none";
"""
SOURCES = f"deb [trusted=yes] file:{OFFLINE}/debs ./\n"  # the manifest vouched for each .deb


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
    if lock["conda"] or plan.conda.in_image:
        _require_conda_files(plan, lock, bundle, listed)
    assert plan.locked is not None  # pinned by the lock already
    # By name, not digest: an image loaded from an archive has no registry digest, and the
    # build checks its id against the lock's instead (lock/pins.py's check_base).
    locked = replace(plan.locked, base=lock["base"]["image"][0])
    return replace(plan, locked=locked, install=replace(plan.install, offline=True))


def _require_conda_files(plan: Plan, lock: Lock, bundle: Path, listed: dict[str, Entry]) -> None:
    """A conda environment rebuilds offline where envkit's rattler bootstrap made it (its
    wheels in wheels/, each package in conda/); Miniforge's installer and a base image's conda
    are not in a bundle."""
    if plan.conda.bootstrap != "rattler":
        source = "Miniforge's installer" if plan.conda.bootstrap else "the base image's conda"
        raise EnvkitError(
            f"--offline rebuilds conda environments that envkit's rattler bootstrap makes (conda "
            f"through a mirror); this one's conda comes from {source}, which no bundle carries",
            f"load the bundle's image instead: `envkit load {bundle}`",
        )
    wheels = {
        canonicalize_name(parse_wheel_filename(Path(path).name)[0])
        for path in listed
        if path.startswith("wheels/") and path.endswith(".whl")
    }
    missing = [name for name, _, _ in RATTLER_REQUIREMENTS if canonicalize_name(name) not in wheels]
    for name, (_, located) in sorted(lock["conda"].items()):
        url = located.partition("#")[0]
        if url != "-" and "conda/" + "/".join(url.split("/")[-2:]) not in listed:
            missing.append(f"{name} (conda/)")
    if missing:
        raise EnvkitError(
            f"{bundle} lacks what the conda environment is rebuilt from: {', '.join(missing)} "
            "(an earlier envkit made it)",
            "make the bundle again with this envkit: `envkit bundle`",
        )


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
        for part in ("wheels", "debs", "conda"):
            (staged / part).mkdir(parents=True)
            found = sorted((bundle / part).rglob("*")) if (bundle / part).is_dir() else []
            for source in (path for path in found if path.is_file()):  # conda's by subdir
                target = staged / part / source.relative_to(bundle / part)
                target.parent.mkdir(parents=True, exist_ok=True)
                link_or_copy(source, target)  # not the image: small
        if not (staged / "debs" / "Packages").exists():  # no .debs: an empty index still serves
            (staged / "debs" / "Packages").write_text("")
        (staged / "apt" / "parts").mkdir(parents=True)
        (staged / "apt" / "apt.conf").write_text(APT_CONF)
        (staged / "apt" / "offline.list").write_text(SOURCES)
        yield
    finally:
        shutil.rmtree(staged, ignore_errors=True)
