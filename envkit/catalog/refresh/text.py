"""The table as YAML text, one row per line (reviewable diffs), and the diff itself."""

from __future__ import annotations

import difflib
import itertools
import json
import pkgutil
import re
from typing import Any


def _header() -> str:
    """compat.yaml's own opening comment, as the table ships it: its one copy is there."""
    shipped = pkgutil.get_data("envkit.catalog", "compat.yaml") or b""
    lines = shipped.decode("utf-8").splitlines()
    return "\n".join(itertools.takewhile(lambda line: line.startswith("#"), lines))


CUDA_COMMENT = """\
  # version: full patch release (nvidia/cuda tag), wheel tag, minimum driver for the toolkit
  # (null: not yet in the table; the family floor applies), minimum driver under minor-version
  # compatibility, nvidia/cuda cuDNN tag part and Ubuntu bases (first = default; [] = no image,
  # e.g. every CUDA 10.2 tag, deleted from Docker Hub in 2023); arm64_ubuntu: those of them
  # with a linux/arm64 image (Grace nodes).
"""

TORCH_COMMENT = """\
  # release: default_cuda (the build PyPI's plain `torch` wheel carries), CUDA builds on
  # download.pytorch.org, pytorch/pytorch image CUDA versions with their cuDNN major
  # (tag: {release}-cuda{cuda}-cudnn{N}-{runtime|devel}), all for x86-64; arm64: linux/arm64's
  # own (CUDA builds on download.pytorch.org's aarch64 wheels, what PyPI's aarch64 wheel is:
  # "cpu" or its CUDA, null where PyPI has none, and pytorch/pytorch images); supported Pythons.
"""

DEFAULTS_COMMENT = """\
# What `torch:` defaults to when envkit.yaml leaves it out. `cuda:` defaults to the release's
# default_cuda when that build fits the flavor, else the newest CUDA build that does.
"""


def _key(name: str) -> str:
    return name if re.fullmatch(r"[a-z_][a-z0-9_]*", name) else json.dumps(name)


def _flow(value: Any) -> str:
    """YAML flow style; JSON is valid YAML for strings, numbers, booleans, lists and null."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_key(str(k))}: {_flow(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)


def table_text(table: dict[str, Any]) -> str:
    lines = [_header(), f"schema_version: {table['schema_version']}"]
    lines += [f"table_version: {_flow(str(table['table_version']))}"]
    lines += [f"as_of: {_flow(str(table['as_of']))}", "sources: " + _flow(table["sources"]), ""]
    lines += ["cuda:", CUDA_COMMENT.rstrip("\n")]
    cuda_keys = ("full", "wheel", "min_driver", "family_min_driver", "cudnn_tag", "ubuntu")
    for version, row in table["cuda"].items():
        ordered = {k: row.get(k) for k in cuda_keys}
        ordered["arm64_ubuntu"] = row.get("arm64_ubuntu", [])
        lines.append(f"  {_flow(version)}: {_flow(ordered)}")
    lines += ["", "torch:", TORCH_COMMENT.rstrip("\n")]
    torch_keys = ("default_cuda", "cuda", "images", "arm64", "python", "confirmed")
    for version, row in table["torch"].items():
        ordered = {k: row[k] for k in torch_keys if k in row}
        lines.append(f"  {_flow(version)}: {_flow(ordered)}")
    lines += ["", DEFAULTS_COMMENT.rstrip("\n"), "defaults:"]
    lines += [f"  torch: {_flow(str(table['defaults']['torch']))}", ""]
    return "\n".join(lines)


def diff(old: str, new: str, name: str = "compat.yaml") -> str:
    return "".join(
        difflib.unified_diff(
            old.splitlines(keepends=True), new.splitlines(keepends=True), f"a/{name}", f"b/{name}"
        )
    )
