"""What a pyproject.toml asks for: [project].dependencies (or a Poetry project's, as
poetry-core translates them), the extras and dependency groups envkit.yaml names (PEP 735's,
PDM's, Poetry's), the project's references to its own extras expanded; each refused at its
line where it cannot be read."""

from __future__ import annotations

import re
from typing import Any

from packaging.markers import Marker
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from envkit.errors import ConfigError, file_issue, in_file
from envkit.plan.project.lock_graph import line_of
from envkit.plan.project.poetry import POETRY_CHECK, is_poetry_only, poetry_dependencies


def line_of_string(text: str, value: str) -> int:
    """The line of VALUE as a TOML string (a dependency's line, not a description that
    mentions it), else of the first line holding it, else (a line Poetry's constraint was
    translated into) the line its name is assigned on."""
    for number, line in enumerate(text.splitlines(), 1):
        if f'"{value}"' in line or f"'{value}'" in line:
            return number
    return line_of(text, value, default=0) or line_of_key(text, re.split(r"[^\w.-]", value)[0])


def line_of_key(text: str, key: str) -> int:
    """The line where KEY is assigned (a Poetry dependency: `numpy = "^1.24"`)."""
    pattern = re.compile(rf"^\s*[\"']?{re.escape(key)}[\"']?\s*=", re.IGNORECASE)
    for number, line in enumerate(text.splitlines(), 1):
        if pattern.match(line):
            return number
    return line_of(text, key)


def _from_poetry(
    name: str, text: str, data: dict[str, Any], extras: tuple[str, ...], groups: tuple[str, ...]
) -> list[str]:
    """A Poetry-only project's main dependencies (and its named groups'), as poetry-core
    translates them."""
    declared = data["tool"]["poetry"].get("group") or {}
    if unknown := [g for g in groups if g not in declared]:
        problem = f"no group {unknown[0]!r} in [tool.poetry.group] (it has: {_listed(declared)})"
        raise in_file(name, line_of(text, "[tool.poetry"), problem, GROUP_FIX)
    try:
        found = poetry_dependencies(data, extras, groups)
    except KeyError as exc:
        known = ", ".join(sorted(data["tool"]["poetry"].get("extras") or {})) or "none"
        line = line_of(text, "[tool.poetry.extras]")
        problem = f"no extra {exc} in [tool.poetry.extras] (it has: {known})"
        raise in_file(name, line, problem, "name one of them in python.extras") from None
    except (ValueError, TypeError, AttributeError) as exc:  # poetry-core's own refusal
        line = line_of(text, "[tool.poetry.dependencies]")
        raise in_file(
            name, line, f"Poetry cannot read its dependencies: {exc}", POETRY_CHECK
        ) from None
    issues = [
        file_issue(name, line_of_key(text, d.name), d.name, *d.why.split(" | ", 1))
        for d in found
        if d.requirement is None
    ]
    if issues:
        raise ConfigError(name, issues)
    return [d.requirement for d in found if d.requirement is not None]


def dynamic_dependencies(project: dict[str, Any]) -> bool:
    return "dependencies" in (project.get("dynamic") or ())


def is_workspace_root(data: dict[str, Any]) -> bool:
    tool = data.get("tool") or {}
    return isinstance(tool, dict) and isinstance((tool.get("uv") or {}).get("workspace"), dict)


def project_requirements(
    name: str,
    text: str,
    data: dict[str, Any],
    extras: tuple[str, ...],
    groups: tuple[str, ...] = (),
) -> list[str]:
    """[project].dependencies (or a Poetry project's) and the named extras' and dependency
    groups' requirements (init reads the torch a project asks for from them too)."""
    if is_poetry_only(data):
        return _from_poetry(name, text, data, extras, groups)
    project = data.get("project")
    if not isinstance(project, dict) and is_workspace_root(data):
        return []  # a virtual root: its members' dependencies are in its uv.lock
    if not isinstance(project, dict):
        raise in_file(name, 1, "no [project] table", "describe the project in [project] (PEP 621)")
    if dynamic_dependencies(project):
        raise in_file(
            name,
            line_of(text, "dynamic"),
            "the dependencies are dynamic (the build backend computes them)",
            "list them in [project].dependencies, or name their requirements file in "
            "packages.requirements",
        )
    wanted = list(project.get("dependencies") or ())
    declared = project.get("optional-dependencies") or {}
    optional = {canonicalize_name(str(k)): v for k, v in declared.items()}  # PEP 685 names
    for extra in map(canonicalize_name, extras):
        if extra not in optional:
            known = ", ".join(sorted(declared)) or "none"
            raise in_file(
                name,
                line_of(text, "optional-dependencies"),
                f"no extra {extra!r} in [project.optional-dependencies] (it has: {known})",
                "name one of them in python.extras",
            )
        wanted += list(optional[extra] or ())
    return _own_extras_expanded(project, wanted) + _group_requirements(name, text, data, groups)


GROUP_FIX = "name one of them in python.groups"


def declared_groups(data: dict[str, Any]) -> list[str]:
    """The dependency groups a pyproject.toml declares: PEP 735's, PDM's dev groups, Poetry's."""
    tool = data.get("tool") or {}
    pdm = (tool.get("pdm") or {}).get("dev-dependencies") or {}
    poetry = (tool.get("poetry") or {}).get("group") or {}
    return sorted(map(str, {**pdm, **(data.get("dependency-groups") or {}), **poetry}))


def _listed(names: Any) -> str:
    return ", ".join(sorted(map(str, names))) or "none"


def _group_requirements(
    name: str, text: str, data: dict[str, Any], groups: tuple[str, ...]
) -> list[str]:
    """The named dependency groups' requirements: PEP 735's [dependency-groups] (an
    include-group taken in), PDM's [tool.pdm.dev-dependencies]."""
    pdm = ((data.get("tool") or {}).get("pdm") or {}).get("dev-dependencies") or {}
    declared = {**pdm, **(data.get("dependency-groups") or {})}
    by_name = {canonicalize_name(str(k)): v for k, v in declared.items()}
    found: list[str] = []
    queue, seen = list(groups), set()
    while queue:
        group = canonicalize_name(queue.pop(0))
        if group not in by_name:
            line = line_of(text, "dependency-groups", 0) or line_of(text, "dev-dependencies")
            problem = f"no dependency group {group!r} (it has: {_listed(declared)})"
            raise in_file(name, line or 1, problem, GROUP_FIX)
        seen.add(group)
        for item in by_name[group] or ():
            if isinstance(item, dict) and "include-group" in item:
                queue += [] if item["include-group"] in seen else [str(item["include-group"])]
            elif isinstance(item, str):
                found.append(item)
    return found


def _own_extras_expanded(project: dict[str, Any], wanted: list[Any]) -> list[Any]:
    """WANTED with the project's own name expanded into its extras, as pip reads a reference
    to itself (torchgeo's `all = ["torchgeo[datasets,models]"]`): never asked of an index by
    name, which would install a release of it (or another's package of that name) beside the
    team's checkout. Its marker, where it has one, goes with each requirement it stands for."""
    own = canonicalize_name(str(project.get("name") or ""))
    named = project.get("optional-dependencies") or {}
    optional = {canonicalize_name(str(k)): v for k, v in named.items()}  # PEP 685 names
    expanded, queue, seen = [], list(wanted), set[str]()
    while queue:
        item = queue.pop(0)
        try:
            requirement = Requirement(str(item))
        except InvalidRequirement:  # said at its line by the reader that parses it
            requirement = None
        if not own or requirement is None or canonicalize_name(requirement.name) != own:
            expanded.append(item)
            continue
        for extra in sorted({canonicalize_name(e) for e in requirement.extras} - seen):
            seen.add(extra)
            queue += [_and_marker(line, requirement.marker) for line in optional.get(extra) or ()]
    return expanded


def _and_marker(line: Any, marker: Marker | None) -> Any:
    """LINE under MARKER too (a self-reference's `; python_version >= '3.10'`)."""
    try:
        requirement = Requirement(str(line))
    except InvalidRequirement:
        return line
    if marker is not None:
        both = f"({requirement.marker}) and ({marker})" if requirement.marker else str(marker)
        requirement.marker = Marker(both)
    return str(requirement)
