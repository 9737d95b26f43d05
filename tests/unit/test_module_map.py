"""docs/module-map.md, generated from the docstrings, is kept true: it is the file the
generator writes now, every module is listed, every listed path exists, and no package imports
one of envkit's packages its line does not allow (lazy imports inside functions and
TYPE_CHECKING imports count too). docs/architecture.md names only files that exist. Also two
smell detectors with headroom: no module over 500 lines, no function over 60 (the aim is ~300
and ~40, STYLE.md; a cap set at the aim made code pack positional tuples to fit, which is worse
than a long function)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.helpers import REPO, script_module

PACKAGE = REPO / "envkit"
MAP = (REPO / "docs" / "module-map.md").read_text(encoding="utf-8")
ARCHITECTURE = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
RULE = re.compile(r"\*\*`envkit/([a-z_]+)(?:/|\.py)`\*\* \(may import: ([^)]*)\)")


def _modules() -> list[Path]:
    return sorted(
        p
        for p in PACKAGE.rglob("*.py")
        if p.name not in ("__init__.py", "__main__.py") and "_templates" not in p.parts
    )


def _unit(path: Path) -> str:
    """The package (or top-level module) a file belongs to: plan, render, cli, errors, ..."""
    parts = path.relative_to(PACKAGE).parts
    return parts[0] if len(parts) > 1 else parts[0].removesuffix(".py")


def _envkit_imports(path: Path) -> set[str]:
    return _envkit_imports_in(path.read_text(encoding="utf-8"))


def _envkit_imports_in(source: str) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(source)):
        names = []
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "envkit":
                names = [f"envkit.{alias.name}" for alias in node.names]
            else:
                names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        for name in names:
            parts = name.split(".")
            if parts[0] == "envkit" and len(parts) > 1 and parts[1] != "__version__":
                found.add(parts[1])
    return found


def _rules() -> dict[str, set[str]]:
    rules = {}
    for unit, allowed in RULE.findall(MAP):
        text = allowed.strip()
        if text.startswith("any"):
            rules[unit] = {"*"}
        elif text.startswith("nothing"):
            rules[unit] = set()
        else:
            rules[unit] = {word.strip() for word in text.split(",")}
    return rules


def test_the_map_is_the_one_the_modules_docstrings_give() -> None:
    """The file is generated (scripts/gen_module_map.py): a module added, moved or described
    anew without running the script shows here."""
    generator = script_module("gen_module_map")
    assert generator.module_map() == MAP, (
        "docs/module-map.md is stale: run `python scripts/gen_module_map.py`"
    )


def test_every_module_is_in_the_map() -> None:
    missing = [
        str(p.relative_to(REPO)) for p in _modules() if f"`{p.relative_to(REPO)}`" not in MAP
    ]
    assert not missing, f"not in docs/module-map.md (run scripts/gen_module_map.py): {missing}"


def test_every_path_in_the_map_exists() -> None:
    listed = re.findall(r"`(envkit/[a-z_/]+(?:\.py)?)`", MAP)
    assert listed
    gone = [path for path in listed if not (REPO / path).exists()]
    assert not gone, f"the module map lists what no longer exists: {gone}"


def test_the_architecture_names_only_files_that_exist() -> None:
    """Every path docs/architecture.md names in backquotes (`envkit/plan/image/layers.py`,
    `templates/...`, `docs/builds.md`; a short `plan/image/layers.py` is read under envkit/)
    exists."""
    named = re.findall(
        r"`([A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)*\.(?:py|md|j2|yaml|toml))`", ARCHITECTURE
    )
    named += re.findall(
        r"`((?:envkit|docs|templates|scripts|tests)/[A-Za-z0-9_./-]*)`", ARCHITECTURE
    )
    assert named
    gone = sorted(
        {
            path
            for path in named
            if not any((base / path).exists() for base in (REPO, REPO / "envkit", REPO / "docs"))
        }
    )
    assert not gone, f"docs/architecture.md names what no longer exists: {gone}"


def test_every_package_has_an_import_rule() -> None:
    rules = _rules()
    units = {_unit(p) for p in _modules()}
    assert units <= set(rules), f"no 'may import' rule for: {sorted(units - set(rules))}"


def test_imports_follow_the_map() -> None:
    rules = _rules()
    crossings = []
    for path in [*_modules(), *PACKAGE.rglob("__init__.py")]:
        unit = _unit(path)
        if unit not in rules or "*" in rules[unit]:
            continue
        for imported in _envkit_imports(path) - {unit} - rules[unit]:
            crossings.append(f"{path.relative_to(REPO)} imports envkit.{imported}")
    assert not crossings, "imports the module map does not allow:\n" + "\n".join(crossings)


def test_the_rule_check_can_fail() -> None:
    """The checker itself sees a crossing: checks/ importing envkit.plan would be one, even
    from inside a function."""
    source = "def f():\n    from envkit.plan import make_plan\n"
    assert _envkit_imports_in(source) == {"plan"}
    assert "plan" not in _rules()["checks"]


def test_no_module_over_500_lines_no_function_over_60() -> None:
    too_long = []
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        if len(text.splitlines()) > 500:
            too_long.append(f"{path.relative_to(REPO)}: {len(text.splitlines())} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > 60:
                    too_long.append(f"{path.relative_to(REPO)}:{node.lineno} {node.name}: {length}")
    assert not too_long, too_long


def test_no_formatter_escape_hatch_in_envkit() -> None:
    """The caps are a prompt to split by meaning: no `# fmt: skip` packs code under them."""
    marker = "fmt: " + "skip"
    found = [
        f"{path.relative_to(REPO)}:{n}"
        for path in PACKAGE.rglob("*.py")
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if marker in line
    ]
    assert not found, found
