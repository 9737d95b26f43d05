"""`envkit schema`: the JSON Schema of envkit.yaml, for editors and CI."""

from __future__ import annotations

import sys
from dataclasses import dataclass

from envkit.config.schema import schema_text
from envkit.errors import EXIT_OK


@dataclass(frozen=True, kw_only=True)
class SchemaRequest:
    """`envkit schema` takes no option."""


def run(request: SchemaRequest) -> int:
    sys.stdout.write(schema_text())
    return EXIT_OK
