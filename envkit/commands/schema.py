"""`envkit schema`: the JSON Schema of envkit.yaml, for editors and CI."""

from __future__ import annotations

import json
import sys

from envkit.errors import EXIT_OK

SCHEMA_FILE = "envkit.schema.json"  # beside envkit.yaml, where `envkit init` writes it


def schema_text() -> str:
    from envkit.config.model import Spec

    document = Spec.model_json_schema()
    document["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    document["title"] = "envkit.yaml"
    return json.dumps(document, indent=2) + "\n"


def schema() -> int:
    sys.stdout.write(schema_text())
    return EXIT_OK
