"""`envkit push --sign KEY`: the pushed digest signed, and the SBOM and the provenance attached to
it as signed in-toto statements. Everything that can be refused is refused before the push (the
key, its password, the lock): a push never leaves an image that was meant to be signed unsigned
for a reason known beforehand."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envkit.checks.programs.lockfile import Lock
from envkit.errors import EnvkitError
from envkit.plan import Plan
from envkit.supply import cosign


@dataclass(frozen=True)
class Signer:
    """A key whose password opened it, and the statements to attach with it."""

    key: Path
    password: str
    sbom: dict[str, Any]
    provenance: dict[str, Any]


def prepare(
    plan: Plan, config: Path, key: Path, lock: Lock, lock_text: str, inputs_tag: str, engine: str
) -> Signer:
    """Check KEY and its password (cosign opens it), and make the statements, before a push."""
    import json

    from envkit.supply.parts import inventory
    from envkit.supply.provenance import provenance
    from envkit.supply.sbom_cyclonedx import cyclonedx_json

    password = cosign.open_key(key)
    sbom = json.loads(cyclonedx_json(inventory(lock, lock_text, plan)))
    made = provenance(plan, config, lock, lock_text, inputs_tag, {"engine": engine})
    return Signer(key, password, sbom, made)


def sign_pushed(signer: Signer, reference: str, say: Callable[[str], None]) -> None:
    """REFERENCE (REPO@sha256:…) signed, then its SBOM and provenance attested."""
    if "@sha256:" not in reference:
        raise EnvkitError(
            f"the registry gave no digest for {reference}: there is nothing exact to sign",
            "push again; a registry that answers a push without a digest cannot hold signatures",
        )
    say(f"signing {reference}")
    cosign.sign(reference, signer.key, signer.password)
    say("attaching the SBOM (CycloneDX 1.6) and the provenance (SLSA v1), signed")
    cosign.attest(reference, signer.key, signer.password, signer.sbom, cosign.SBOM_TYPE)
    cosign.attest(reference, signer.key, signer.password, signer.provenance, cosign.PROVENANCE_TYPE)
