"""Write docs/config.md's field tables from the config model (run after changing the model)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from envkit.config.load import _model_of
from envkit.config.model import Spec

HEAD = """# envkit.yaml reference

Generated from `envkit/config/model.py` by `scripts/gen_config_doc.py`; `envkit schema` prints the
same as JSON Schema. Every field is optional except `name`. Quote versions (`"3.10"`, `"12.4"`):
YAML reads unquoted `3.10` as the number 3.1, and envkit refuses numbers there for that reason.
Relative paths (key files, CA certificates) are relative to envkit.yaml.

"""


def _type(annotation: Any) -> str:
    text = getattr(annotation, "__name__", None) or str(annotation)
    return text.replace("typing.", "").replace("envkit.config.model.", "")


def _section(model: type[BaseModel], prefix: str, out: list[str]) -> None:
    nested: list[tuple[str, type[BaseModel]]] = []
    out.append(f"## `{prefix or 'top level'}`\n")
    out.append("| field | default | meaning |")
    out.append("| --- | --- | --- |")
    for name, info in model.model_fields.items():
        inner = _model_of(info.annotation)
        default = "" if info.is_required() else repr(info.get_default(call_default_factory=True))
        if inner is not None:
            nested.append((f"{prefix}.{name}" if prefix else name, inner))
            default = "(section)"
        doc = (inner.__doc__ or "").strip() if inner is not None else ""
        meaning = info.description or (doc.splitlines()[0] if doc else "")
        out.append(f"| `{name}` | `{default}` | {meaning} |")
    out.append("")
    for path, inner in nested:
        _section(inner, path, out)


def main() -> None:
    out: list[str] = []
    _section(Spec, "", out)
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("docs/config.md")
    target.write_text(HEAD + "\n".join(out).replace("`(section)`", "section") + "\n")


if __name__ == "__main__":
    main()
