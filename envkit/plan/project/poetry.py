"""A Poetry project's [tool.poetry.dependencies] (no [project] table) as PEP 508 lines,
translated by poetry-core itself (caret, tilde, constraint lists, markers, extras), not by a
new grammar; the main group only, as `poetry install --only main`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from envkit.plan.project.torch_lines import TORCHES

POETRY_CHECK = "fix the entry as `poetry check` says"


@dataclass(frozen=True)
class PoetryDependency:
    name: str  # as the file spells it: its line is found by it
    requirement: str | None  # PEP 508; None where Poetry's entry cannot be installed by pip
    why: str = ""  # why not, with the fix after a " | "


def is_poetry_only(data: dict[str, Any]) -> bool:
    tool = data.get("tool")
    poetry = tool.get("poetry") if isinstance(tool, dict) else None
    return not isinstance(data.get("project"), dict) and isinstance(poetry, dict)


def poetry_dependencies(
    data: dict[str, Any], extras: tuple[str, ...], groups: tuple[str, ...] = ()
) -> list[PoetryDependency]:
    """The main group's dependencies, the named groups' and those the named extras turn on
    (Python itself is Poetry's range for the interpreter, not a package). KeyError names an
    unknown extra."""
    from poetry.core.factory import Factory  # only a Poetry project pays for the import

    poetry = data["tool"]["poetry"]
    declared = dict(poetry.get("dependencies") or {})
    for group in groups:  # checked by the caller: each is a [tool.poetry.group.NAME]
        declared.update(poetry["group"][group].get("dependencies") or {})
    chosen = {name for extra in extras for name in poetry.get("extras", {})[extra]}
    # A declared source is searched beside the mirror (package_sources.py): its packages install.
    sources = {s.get("name") for s in poetry.get("source") or () if isinstance(s, dict)}
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
            named = one.get("source") if isinstance(one, dict) else None
            # torch and its companions come from envkit's torch layer whatever index is named
            if named and named not in sources and name.lower() not in TORCHES:
                found.append(
                    PoetryDependency(
                        name,
                        None,
                        f"{name} is taken from the source {named!r}, which no "
                        f"[[tool.poetry.source]] declares | declare it with its url (its "
                        "index is then searched beside the mirror)",
                    )
                )
                continue
            try:
                dependency = Factory.create_dependency(name, one)
                requirement = dependency.to_pep_508()
            except Exception as exc:  # poetry-core's parser (lark) raises its own errors
                said = " ".join(str(exc).split())[:200]
                why = f"Poetry cannot read {name}'s entry ({said}) | {POETRY_CHECK}"
                found.append(PoetryDependency(name, None, why))
                continue
            if dependency.is_optional() and name not in chosen:
                continue
            found.append(PoetryDependency(name, requirement))
    return found
