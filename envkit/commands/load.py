"""`envkit load DIR`: a bundle's image into this machine's engine, once the bundle is checked
against its manifest (nothing is loaded from a bundle that differs from it)."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, kw_only=True)
class LoadRequest:
    bundle: Path
    config: str | None = None  # its signing.verify: the key the bundle must be signed by


def run(request: LoadRequest) -> int:
    from envkit.bundle.manifest import check_bundle
    from envkit.engine.client import docker_client
    from envkit.services.project import project_or_defaults

    key = project_or_defaults(request.config).plan.signing_key
    check_bundle(request.bundle, key, "image.tar")
    client = docker_client()
    with (request.bundle / "image.tar").open("rb") as archive:
        loaded = client.images.load(archive)
    names = sorted(tag for image in loaded for tag in image.tags)
    sys.stdout.write(f"loaded {', '.join(names) or 'an untagged image'} from {request.bundle}\n")
    return 0
