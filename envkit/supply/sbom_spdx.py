"""The inventory as SPDX 2.3 JSON, built, validated and written by spdx-tools. SPDX demands a
creation time: SOURCE_DATE_EPOCH where set (the reproducible-builds convention), so one lock
gives the same bytes; else now."""

from __future__ import annotations

import io
import os
import re
import uuid
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from envkit import __version__
from envkit.errors import EnvkitError
from envkit.supply.parts import Inventory, Part
from envkit.supply.sbom_cyclonedx import SERIALS

if TYPE_CHECKING:
    from spdx_tools.spdx.model.package import Package

NAMESPACE = "https://spdx.envkit.invalid"  # SPDX wants a URI unique per document, never fetched


def _spdx_id(part: Part) -> str:
    # From the purl, which is unique (an apt package of two architectures has two).
    unique = part.purl or f"{part.kind}-{part.name}-{part.version}"
    return "SPDXRef-" + re.sub(r"[^A-Za-z0-9.-]", "-", unique)


def created() -> datetime:
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "")
    if epoch.isdigit():
        return datetime.fromtimestamp(int(epoch), timezone.utc)
    return datetime.now(timezone.utc).replace(microsecond=0)


def _package(part: Part) -> Package:
    from spdx_tools.spdx.model.checksum import Checksum, ChecksumAlgorithm
    from spdx_tools.spdx.model.package import (
        ExternalPackageRef,
        ExternalPackageRefCategory,
        Package,
        PackagePurpose,
    )
    from spdx_tools.spdx.model.spdx_no_assertion import SpdxNoAssertion

    algorithms = {"SHA-256": ChecksumAlgorithm.SHA256, "MD5": ChecksumAlgorithm.MD5}
    manager = ExternalPackageRefCategory.PACKAGE_MANAGER
    return Package(
        spdx_id=_spdx_id(part),
        name=part.name,
        version=part.version,
        download_location=SpdxNoAssertion(),
        files_analyzed=False,
        checksums=[Checksum(algorithms[alg], value) for alg, value in part.hashes],
        external_references=[ExternalPackageRef(manager, "purl", part.purl)] if part.purl else [],
        comment="; ".join(f"{k}={v}" for k, v in part.properties) or None,
        primary_package_purpose=(
            PackagePurpose.CONTAINER if part.kind == "base" else PackagePurpose.LIBRARY
        ),
    )


def spdx_json(inventory: Inventory) -> str:
    from spdx_tools.spdx.model.actor import Actor, ActorType
    from spdx_tools.spdx.model.document import CreationInfo, Document
    from spdx_tools.spdx.model.package import Package, PackagePurpose
    from spdx_tools.spdx.model.relationship import Relationship, RelationshipType
    from spdx_tools.spdx.model.spdx_no_assertion import SpdxNoAssertion
    from spdx_tools.spdx.validation.document_validator import validate_full_spdx_document
    from spdx_tools.spdx.writer.json import json_writer

    serial = uuid.uuid5(SERIALS, inventory.version)
    info = CreationInfo(
        spdx_version="SPDX-2.3",
        spdx_id="SPDXRef-DOCUMENT",
        name=f"{inventory.name}-image",
        document_namespace=f"{NAMESPACE}/{inventory.name}-{serial}",
        creators=[Actor(ActorType.TOOL, f"envkit-{__version__}")],
        created=created(),
        document_comment="; ".join(f"{k}={v}" for k, v in inventory.properties) or None,
    )
    image = Package(
        spdx_id="SPDXRef-Image",
        name=inventory.name,
        version=inventory.version,
        download_location=SpdxNoAssertion(),
        files_analyzed=False,
        primary_package_purpose=PackagePurpose.CONTAINER,
    )
    packages = [image, *(_package(part) for part in inventory.parts)]
    relationships = [Relationship("SPDXRef-DOCUMENT", RelationshipType.DESCRIBES, image.spdx_id)]
    relationships += [
        Relationship(image.spdx_id, RelationshipType.CONTAINS, package.spdx_id)
        for package in packages[1:]
    ]
    document = Document(info, packages=packages, relationships=relationships)
    invalid = validate_full_spdx_document(document)
    if invalid:  # a bug of envkit's, never the user's: say which rule it broke
        raise EnvkitError(
            f"the SPDX document envkit made breaks SPDX 2.3: {invalid[0].validation_message}",
            "report it to envkit's maintainers, with the lock",
        )
    out = io.StringIO()
    json_writer.write_document_to_stream(document, out, validate=False)
    return out.getvalue() + "\n"
