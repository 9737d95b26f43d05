"""Loading of the YAML data files shipped inside the package."""

from __future__ import annotations

from importlib import resources
from typing import Any

import yaml


def load_yaml(name: str) -> dict[str, Any]:
    text = resources.files("envkit.catalog").joinpath(name).read_text(encoding="utf-8")
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    data = yaml.load(text, Loader=loader)  # noqa: S506 - a SafeLoader (C or Python)
    if not isinstance(data, dict):
        raise RuntimeError(f"envkit's catalog file {name} is damaged")
    return data
