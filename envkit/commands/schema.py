"""`envkit schema`: the JSON Schema of envkit.yaml, for editors and CI."""

from __future__ import annotations

import json
import sys

from envkit.errors import EXIT_OK


def schema() -> int:
    from envkit.config.model import Spec

    document = Spec.model_json_schema()
    document["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    document["title"] = "envkit.yaml"
    sys.stdout.write(json.dumps(document, indent=2) + "\n")
    return EXIT_OK
