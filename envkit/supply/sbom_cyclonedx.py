"""The inventory as CycloneDX 1.6 JSON, written and checked against the schema by
cyclonedx-python-lib. Byte-identical for one lock: the serial number is derived from the lock,
every component is named by its purl, and there is no timestamp (the field is optional)."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from envkit import __version__
from envkit.errors import EnvkitError
from envkit.supply.parts import Inventory, Part

if TYPE_CHECKING:
    from cyclonedx.model.component import Component

SERIALS = uuid.UUID("5d1c0c52-9b4e-4f6e-8c3e-6b1f0b6e2f10")  # envkit's namespace for uuid5


def _component(part: Part) -> Component:
    from cyclonedx.model import HashAlgorithm, HashType, Property
    from cyclonedx.model.component import Component, ComponentType
    from packageurl import PackageURL

    algorithms = {"SHA-256": HashAlgorithm.SHA_256, "MD5": HashAlgorithm.MD5}
    return Component(
        type=ComponentType.CONTAINER if part.kind == "base" else ComponentType.LIBRARY,
        name=part.name,
        version=part.version,
        purl=PackageURL.from_string(part.purl) if part.purl else None,
        bom_ref=part.purl or f"{part.kind}:{part.name}@{part.version}",
        hashes=[HashType(alg=algorithms[alg], content=hex_) for alg, hex_ in part.hashes],
        properties=[
            Property(name=k, value=v) for k, v in (("envkit:kind", part.kind), *part.properties)
        ],
    )


def cyclonedx_json(inventory: Inventory) -> str:
    from cyclonedx.model import Property
    from cyclonedx.model.bom import Bom, BomMetaData
    from cyclonedx.model.component import Component, ComponentType
    from cyclonedx.model.tool import ToolRepository
    from cyclonedx.output.json import JsonV1Dot6
    from cyclonedx.schema import SchemaVersion
    from cyclonedx.validation.json import JsonStrictValidator

    image = Component(
        type=ComponentType.CONTAINER,
        name=inventory.name,
        version=inventory.version,
        bom_ref=f"image:{inventory.name}",
        properties=[Property(name=k, value=v) for k, v in inventory.properties],
    )
    tool = Component(
        type=ComponentType.APPLICATION, name="envkit", version=__version__, bom_ref="tool:envkit"
    )
    bom = Bom(
        serial_number=uuid.uuid5(SERIALS, inventory.version),
        metadata=BomMetaData(component=image, tools=ToolRepository(components=[tool])),
    )
    # No timestamp (optional in 1.6): one lock, one document, byte for byte.
    bom.metadata.timestamp = None  # type: ignore[assignment]  # typed datetime, written only when set
    components = [_component(part) for part in inventory.parts]
    for component in components:
        bom.components.add(component)
    bom.register_dependency(image, components)
    text = str(JsonV1Dot6(bom).output_as_string(indent=2))
    invalid = JsonStrictValidator(SchemaVersion.V1_6).validate_str(text)
    if invalid is not None:  # a bug of envkit's, never the user's: say which rule it broke
        raise EnvkitError(
            f"the CycloneDX document envkit made breaks the 1.6 schema: {invalid.data.message}",
            "report it to envkit's maintainers, with the lock",
        )
    return text + "\n"
