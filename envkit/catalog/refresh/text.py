"""The table as YAML text, one row per line (reviewable diffs), and the diff itself."""

from __future__ import annotations

import difflib
import itertools
import json
import pkgutil
import re
from collections.abc import Iterable
from typing import Any


def _comments() -> dict[str, str]:
    """compat.yaml's own comments as the table ships them (their one copy is there): the
    opening block, the blocks under `cuda:` and `torch:`, and those above `defaults:`,
    `tensorflow:` and `ngc_pytorch:`."""
    lines = (pkgutil.get_data("envkit.catalog", "compat.yaml") or b"").decode().splitlines()

    def block(found: Iterable[str]) -> str:
        return "\n".join(itertools.takewhile(lambda line: line.lstrip().startswith("#"), found))

    def above(name: str) -> str:
        return "\n".join(reversed(block(reversed(lines[: lines.index(name)])).splitlines()))

    return {
        "header": block(lines),
        "cuda": block(lines[lines.index("cuda:") + 1 :]),
        "torch": block(lines[lines.index("torch:") + 1 :]),
        "defaults": above("defaults:"),
        "tensorflow": above("tensorflow:"),
        "ngc_pytorch": above("ngc_pytorch:"),
    }


def _key(name: str) -> str:
    return name if re.fullmatch(r"[a-z_][a-z0-9_]*", name) else json.dumps(name)


def _flow(value: Any) -> str:
    """YAML flow style; JSON is valid YAML for strings, numbers, booleans, lists and null."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_key(str(k))}: {_flow(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)


def table_text(table: dict[str, Any]) -> str:
    comments = _comments()
    lines = [comments["header"], f"schema_version: {table['schema_version']}"]
    lines += [f"table_version: {_flow(str(table['table_version']))}"]
    lines += [f"as_of: {_flow(str(table['as_of']))}", "sources: " + _flow(table["sources"]), ""]
    lines += ["cuda:", comments["cuda"]]
    cuda_keys = ("full", "wheel", "min_driver", "family_min_driver", "cudnn_tag", "ubuntu")
    for version, row in table["cuda"].items():
        ordered = {k: row.get(k) for k in cuda_keys}
        ordered["arm64_ubuntu"] = row.get("arm64_ubuntu", [])
        lines.append(f"  {_flow(version)}: {_flow(ordered)}")
    lines += ["", "torch:", comments["torch"]]
    torch_keys = ("default_cuda", "cuda", "images", "arm64", "python", "confirmed")
    for version, row in table["torch"].items():
        ordered = {k: row[k] for k in torch_keys if k in row}
        lines.append(f"  {_flow(version)}: {_flow(ordered)}")
    lines += ["", comments["defaults"], "defaults:"]
    lines += [f"  torch: {_flow(str(table['defaults']['torch']))}", ""]
    lines += [comments["tensorflow"], "tensorflow:"]  # by hand: the refresh keeps it as it is
    lines += [f"  {_flow(k)}: {_flow(v)}" for k, v in table.get("tensorflow", {}).items()] + [""]
    lines += [comments["ngc_pytorch"], "ngc_pytorch:"]  # by hand too
    lines += [f"  {_flow(k)}: {_flow(v)}" for k, v in table.get("ngc_pytorch", {}).items()] + [""]
    return "\n".join(lines)


def diff(old: str, new: str, name: str = "compat.yaml") -> str:
    return "".join(
        difflib.unified_diff(
            old.splitlines(keepends=True), new.splitlines(keepends=True), f"a/{name}", f"b/{name}"
        )
    )
