"""No import cycle among envkit's modules: not at run time, not through a function-level import,
not through a TYPE_CHECKING one. A cycle is where layering has been lost (two modules that each
need the other are one module, or want a third below both)."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.helpers import REPO

PACKAGE = REPO / "envkit"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {
        _module_name(p): p
        for p in PACKAGE.rglob("*.py")
        if "_templates" not in p.parts and p.name != "__main__.py"
    }


def _target(name: str, known: dict[str, Path]) -> str | None:
    """The module an import names: itself, or the package holding the imported name."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def _imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            # `from pkg import mod` imports the module pkg.mod; `from mod import f` the module.
            targets = [f"{base}.{alias.name}" for alias in node.names] or [base]
        else:
            continue
        for imported in targets:
            hit = _target(imported, known)
            if hit is not None and hit != name:
                found.add(hit)
    return found


def graph() -> dict[str, set[str]]:
    known = _modules()
    return {name: _imports(name, path, known) for name, path in known.items()}


def _reach(edges: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = list(edges.get(start, ()))
    while todo:
        node = todo.pop()
        if node not in seen:
            seen.add(node)
            todo += edges.get(node, ())
    return seen


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Groups of modules each of which imports, through others, every other one of the group."""
    reach = {node: _reach(edges, node) for node in edges}
    groups = {
        tuple(sorted({node} | {o for o in reach[node] if node in reach.get(o, set())}))
        for node in edges
        if node in reach[node]
    }
    return [list(group) for group in sorted(groups)]


def test_envkit_has_no_import_cycle() -> None:
    found = cycles(graph())
    assert not found, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_the_cycle_finder_sees_a_cycle_through_a_function_level_import() -> None:
    """The checker itself can fail: a lazy import back is still a cycle."""
    edges = graph()
    edges["envkit.errors"] = {*edges.get("envkit.errors", set()), "envkit.config.load"}
    assert any("envkit.errors" in c and "envkit.config.load" in c for c in cycles(edges))


def test_relative_imports_in_the_checks_package_are_followed() -> None:
    edges = graph()
    assert "envkit.checks.core.registry" in edges["envkit.checks.suite.cuda"]
    assert "envkit.checks.core.location" in edges["envkit.checks.programs.health"]
