"""What built the team's image, from what: a SLSA v1 provenance predicate. cosign wraps it in
an in-toto statement whose subject is the pushed digest, signs it and attaches it beside the
image (`envkit push --sign`).

Every input is named by a digest: envkit.yaml, the lock, the inputs tag (the digest of the whole
build context), the base image; the mirrors are named by URL. No secret is among them: the
build's secrets (.netrc, keys) are never inputs of the context."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from envkit import __version__
from envkit.checks.programs.lockfile import Lock
from envkit.plan import Plan
from envkit.supply.parts import mirror_facts

BUILD_TYPE = "urn:envkit:image-build:v1"  # docs/supply-chain.md says what its parameters mean


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def provenance(
    plan: Plan, config: Path, lock: Lock, lock_text: str, inputs_tag: str, engine: dict[str, str]
) -> dict[str, Any]:
    """The predicate (https://slsa.dev/provenance/v1). ENGINE: what built it ({"engine": "Docker
    Engine 20.10.24"})."""
    base = lock["base"]
    base_uri, _, base_digest = base.get("digest", ("-",))[0].partition("@")
    if base_digest:
        uri, sha256 = f"oci://{base_uri}", base_digest.split(":", 1)[1]
    else:  # a base from no registry: its image id
        uri = f"docker-image-id:{base.get('image', ('-',))[0]}"
        sha256 = base.get("id", ("-",))[0].removeprefix("sha256:")
    dependencies: list[dict[str, Any]] = [{"uri": uri, "digest": {"sha256": sha256}}]
    dependencies += [
        {"uri": url, "annotations": {"role": role.removeprefix("envkit:")}}
        for role, url in mirror_facts(plan, lock)
    ]
    return {
        "buildDefinition": {
            "buildType": BUILD_TYPE,
            "externalParameters": {
                "config": {"path": config.name, "sha256": _sha256(config.read_bytes())},
                "lock": {"sha256": _sha256(lock_text.encode("utf-8"))},
                "inputs": inputs_tag,
                "platforms": list(plan.platforms),
            },
            "internalParameters": {"image": plan.image.tag, "base": plan.image.base},
            "resolvedDependencies": dependencies,
        },
        "runDetails": {
            "builder": {"id": "urn:envkit:builder", "version": {"envkit": __version__, **engine}},
            "metadata": {"invocationId": inputs_tag},
        },
    }
