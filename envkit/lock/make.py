"""`envkit lock`'s work: read everything a built image holds and write it as envkit.lock.

The installed state is read inside the image by the checks bundle (`capture`, the same code the
system.lock check runs), the base image's own packages by dpkg-query in a throwaway container of
the base (so a locked rebuild pins only what envkit added), the base's id and registry digest
from the engine, and pip's file sums from the indexes the image was built from."""

from __future__ import annotations

import contextlib
import secrets
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from envkit.checks.lockfile import Entries, Lock, empty_lock, format_lock
from envkit.engine.client import docker_client
from envkit.errors import EnvkitError
from envkit.lock.hashes import fill_hashes
from envkit.lock.requested import INPUTS_LABEL, inputs_digest, requested
from envkit.plan import Plan
from envkit.targets import TargetOptions, open_target
from envkit.verify.run import capture_on_target

# No image id, tag or date in the comments: a rebuild from the lock yields the same bytes.
COMMENTS = (
    "envkit.lock: everything installed in the image built from envkit.yaml. Written by",
    "`envkit lock`; rebuild exactly with `envkit build --locked`. Format: docs/lock.md.",
)
BASE_DPKG = "dpkg-query -W -f '${Package}:${Architecture}\\t${Version}\\t${db:Status-Abbrev}\\n'"


@dataclass(frozen=True)
class MadeLock:
    text: str
    lock: Lock
    unhashed: tuple[str, ...]  # pip packages no index served sums for (they keep record:)


def _image(client: Any, tag: str, plan: Plan) -> Any:
    from docker.errors import ImageNotFound

    try:
        image = client.images.get(tag)
    except ImageNotFound:
        raise EnvkitError(
            f"image {tag} is not on this engine", "run `envkit build` first"
        ) from None
    if (image.labels or {}).get(INPUTS_LABEL) != inputs_digest(plan):
        raise EnvkitError(
            f"image {tag} was built from another envkit.yaml than the one read now",
            "run `envkit build` first, so the lock describes this config",
        )
    return image


def _base_facts(client: Any, name: str) -> Entries:
    image = client.images.get(name)
    digests = [d for d in image.attrs.get("RepoDigests") or [] if "@sha256:" in d]
    return {
        "image": (name,),
        "id": (image.id,),
        "digest": (sorted(digests)[0] if digests else "-",),
    }


def _base_apt(name: str) -> set[str]:
    """`name:arch=version` of every package the base image itself has."""
    target = open_target(f"image://{name}", TargetOptions(run_id=secrets.token_hex(6)))
    try:
        listed = target.run(["sh", "-c", BASE_DPKG], timeout=120)
    finally:
        with contextlib.suppress(Exception):  # a throwaway; remove_throwaways catches the rest
            target.close()
    found = set()
    for line in listed.stdout.splitlines():
        fields = line.split("\t")
        if len(fields) == 3 and fields[2].startswith("ii"):
            found.add(f"{fields[0]}={fields[1]}")
    return found


def _capture(tag: str, conda_prefix: str | None) -> dict[str, Any]:
    target = open_target(f"image://{tag}", TargetOptions(run_id=secrets.token_hex(6)))
    try:
        return capture_on_target(target, conda_prefix)
    finally:
        with contextlib.suppress(Exception):
            target.close()


def state_of(captured: dict[str, Any]) -> Lock:
    """The capture's JSON (lists) as lock sections (tuples)."""
    sections = captured["state"].items()
    return {section: {k: tuple(v) for k, v in entries.items()} for section, entries in sections}


def make_lock(plan: Plan, tag: str) -> MadeLock:
    client = docker_client()
    _image(client, tag, plan)
    lock = empty_lock()
    lock["base"] = _base_facts(client, plan.image.base)
    lock["base"]["conda-prefix"] = (plan.conda_prefix or "-",)
    lock["requested"] = requested(plan)
    # The two throwaway containers are independent: start them together.
    with ThreadPoolExecutor(max_workers=2) as pool:
        capturing = pool.submit(_capture, tag, plan.conda_prefix)
        listing = pool.submit(_base_apt, plan.image.base)
        captured, in_base = capturing.result(), listing.result()
    state = state_of(captured)
    lock["base"]["arch"] = (str(captured["arch"]),)
    lock["apt"] = {
        name: (values[0], "base" if f"{name}={values[0]}" in in_base else "added")
        for name, values in state["apt"].items()
    }
    lock["conda"], lock["torch"] = state["conda"], state["torch"]
    indexes = tuple(i for i in (plan.torch.index_url, plan.pip.index_url) if i)
    lock["pip"], unhashed = fill_hashes(state["pip"], indexes + plan.pip.extra_index_urls)
    return MadeLock(format_lock(lock, COMMENTS), lock, tuple(unhashed))
