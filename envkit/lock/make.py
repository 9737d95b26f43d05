"""`envkit lock`'s work: read everything a built image holds and write it as envkit.lock.

The installed state is read inside the image by the checks bundle (`capture`, the same code the
system.lock check runs), the base image's own packages by dpkg-query in a throwaway container of
the base (so a locked rebuild pins only what envkit added), the base's id and registry digest
from the engine, and pip's file sums from the indexes the image was built from."""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

from envkit.checks.programs.lockfile import Entries, Lock, empty_lock, format_lock
from envkit.checks.programs.lockstate import DPKG_FORMAT, parse_dpkg
from envkit.engine.client import docker_client, require_image
from envkit.errors import EnvkitError
from envkit.lock.hashes import fill_hashes
from envkit.lock.requested import INPUTS_LABEL, inputs_digest, requested
from envkit.lock.validate import repository
from envkit.plan import Plan
from envkit.targets import open_target
from envkit.targets.base import Target, TargetOptions
from envkit.verify.run import capture_on_target

# No image id, tag or date in the comments: a rebuild from the lock yields the same bytes.
COMMENTS = (
    "envkit.lock: everything installed in the image built from envkit.yaml. Written by",
    "`envkit lock`; rebuild exactly with `envkit build --locked`. Format: docs/lock.md.",
)


T = TypeVar("T")


@dataclass(frozen=True)
class MadeLock:
    text: str
    lock: Lock
    unhashed: tuple[str, ...]  # pip packages no index served sums for (they keep record:)


def _image(client: Any, tag: str, plan: Plan) -> Any:
    image = require_image(client, tag, "run `envkit build` first")
    if (image.labels or {}).get(INPUTS_LABEL) != inputs_digest(plan):
        raise EnvkitError(
            f"image {tag} was built from another envkit.yaml than the one read now",
            "run `envkit build` first, so the lock describes this config",
        )
    return image


def _base_facts(client: Any, name: str) -> Entries:
    image = require_image(
        client,
        name,
        "pull or import it again: the lock records the base's own packages and id",
        what="the base image",
    )
    digests = [d for d in image.attrs.get("RepoDigests") or [] if "@sha256:" in d]
    # The digest of the base's own repository (an image pulled under two names has two).
    digests = [d for d in digests if repository(d) == repository(name)] or digests
    return {
        "image": (name,),
        "id": (image.id,),
        "digest": (sorted(digests)[0] if digests else "-",),
    }


def _on_target(url: str, work: Callable[[Target], T]) -> T:
    """`work` on the target at URL, closed afterwards (an image:// one's container removed)."""
    target = open_target(url, TargetOptions(run_id=secrets.token_hex(6)))
    try:
        return work(target)
    finally:
        with contextlib.suppress(Exception):  # remove_throwaways catches what this misses
            target.close()


def _base_apt(name: str) -> set[str]:
    """`name:arch=version` of every package the base image itself has (it may lack python)."""
    argv = ["dpkg-query", "-W", "-f", DPKG_FORMAT]
    listed = _on_target(f"image://{name}", lambda target: target.run(argv, timeout=120))
    return {f"{key}={values[0]}" for key, values in parse_dpkg(listed.stdout).items()}


def _as_arch(listed: set[str], arch: str) -> set[str]:
    """The base's packages named for ARCH: a multi-platform base's engine copy is the engine's
    own architecture (an arm64 image locked on an x86 engine lists the amd64 base), and a
    Debian base is the same packages at the same versions on each (`libc6:amd64=2.36-9` is
    `libc6:arm64=2.36-9` there); `:all` packages are every architecture's already."""
    from collections import Counter

    arches = Counter(entry.partition("=")[0].partition(":")[2] for entry in listed)
    arches.pop("all", None)
    own = arches.most_common(1)[0][0] if arches else arch
    if own == arch:
        return listed
    renamed = set()
    for entry in listed:
        key, _, version = entry.partition("=")
        name, _, pkg_arch = key.partition(":")
        renamed.add(f"{name}:{arch if pkg_arch == own else pkg_arch}={version}")
    return renamed


def capture_state(url: str, conda_prefix: str | None) -> tuple[Lock, str]:
    """What a target holds (image:// as a throwaway), and dpkg's architecture there."""
    captured = _on_target(url, lambda target: capture_on_target(target, conda_prefix))
    sections = captured["state"].items()  # the capture's JSON (lists) as lock sections (tuples)
    state = {section: {k: tuple(v) for k, v in entries.items()} for section, entries in sections}
    return state, str(captured["arch"])


def make_lock(plan: Plan, tag: str) -> MadeLock:
    client = docker_client()
    _image(client, tag, plan)
    lock = empty_lock()
    lock["base"] = _base_facts(client, plan.image.base)
    lock["base"]["conda-prefix"] = (plan.conda_prefix or "-",)
    lock["requested"] = requested(plan)
    # The two throwaway containers are independent: start them together.
    with ThreadPoolExecutor(max_workers=2) as pool:
        capturing = pool.submit(capture_state, f"image://{tag}", plan.conda_prefix)
        listing = pool.submit(_base_apt, plan.image.base)
        (state, arch), in_base = capturing.result(), listing.result()
    lock["base"]["arch"] = (arch,)
    in_base = _as_arch(in_base, arch)
    lock["apt"] = {
        name: (values[0], "base" if f"{name}={values[0]}" in in_base else "added")
        for name, values in state["apt"].items()
    }
    lock["conda"], lock["torch"] = state["conda"], state["torch"]
    indexes = tuple(i for i in (plan.torch.index_url, plan.pip.index_url) if i)
    lock["pip"], unhashed = fill_hashes(state["pip"], indexes + plan.pip.extra_index_urls)
    return MadeLock(format_lock(lock, COMMENTS), lock, tuple(unhashed))
