"""The JSON Schema of envkit.yaml, from the model: `envkit schema` prints it, `envkit init`
writes it beside the config for editors."""

from __future__ import annotations

import json

from envkit.config.model import Spec

SCHEMA_FILE = "envkit.schema.json"  # beside envkit.yaml, where `envkit init` writes it


def schema_text() -> str:
    document = Spec.model_json_schema()
    document["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    document["title"] = "envkit.yaml"
    return json.dumps(document, indent=2) + "\n"
