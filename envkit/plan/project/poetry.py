"""A Poetry project's dependencies ([tool.poetry.dependencies], with no [project] table) as
PEP 508 requirement lines, translated by poetry-core itself: its caret, tilde and wildcard
constraints, markers, extras, git sources and multiple-constraint lists mean what Poetry says
they mean, not what a new grammar here guesses. Groups other than the main one (dev, docs,
test) are not installed, as `poetry install --only main` does not."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class PoetryDependency:
    name: str  # as the file spells it: its line is found by it
    requirement: str | None  # PEP 508; None where Poetry's entry cannot be installed by pip
    why: str = ""  # why not, with the fix after a " | "


def is_poetry_only(data: dict[str, Any]) -> bool:
    tool = data.get("tool")
    poetry = tool.get("poetry") if isinstance(tool, dict) else None
    return not isinstance(data.get("project"), dict) and isinstance(poetry, dict)


def poetry_dependencies(data: dict[str, Any], extras: tuple[str, ...]) -> list[PoetryDependency]:
    """The main group's dependencies and those the named extras turn on (Python itself is
    Poetry's range for the interpreter, not a package). KeyError names an unknown extra."""
    from poetry.core.factory import Factory  # only a Poetry project pays for the import

    poetry = data["tool"]["poetry"]
    declared = poetry.get("dependencies") or {}
    chosen = {name for extra in extras for name in poetry.get("extras", {})[extra]}
    found = []
    for name, constraint in declared.items():
        if name.lower() == "python":
            continue
        for one in constraint if isinstance(constraint, list) else [constraint]:
            if isinstance(one, dict) and "path" in one:
                found.append(
                    PoetryDependency(
                        name,
                        None,
                        f"{name} is taken from the path {one['path']}, which is not in the image's "
                        f"build context | install it from the workspace (`pip install -e "
                        f"{one['path']}`) in build.steps, or publish it to an index",
                    )
                )
                continue
            dependency = Factory.create_dependency(name, one)
            if dependency.is_optional() and name not in chosen:
                continue
            found.append(PoetryDependency(name, dependency.to_pep_508()))
    return found
