"""`envkit schema`: the JSON Schema of envkit.yaml, from the model, for editors and CI; `envkit
init` writes it beside the config too."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass

from envkit.config.model import Spec
from envkit.errors import EXIT_OK

SCHEMA_FILE = "envkit.schema.json"  # beside envkit.yaml, where `envkit init` writes it


@dataclass(frozen=True, kw_only=True)
class SchemaRequest:
    """`envkit schema` takes no option."""


def schema_text() -> str:
    document = Spec.model_json_schema()
    document["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    document["title"] = "envkit.yaml"
    return json.dumps(document, indent=2) + "\n"


def run(request: SchemaRequest) -> int:
    sys.stdout.write(schema_text())
    return EXIT_OK
