"""Write docs/module-map.md from the code: each package's line from its `__init__.py` docstring
(its first sentence, and its last paragraph, "May import: ..."), each module's line from the
first sentence of its own docstring. Run after adding, moving or renaming a module, or after
rewording a docstring's first sentence; tests/unit/test_module_map.py fails while the file and
the code disagree. `--check` says whether the file is current and writes nothing."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "envkit"
DOC = REPO / "docs" / "module-map.md"
COMMAND = "python scripts/gen_module_map.py"
INTRO = f"""# envkit module map

Generated from the docstrings by `{COMMAND}`; do not edit by hand.
One line per package and module: what each owns (its docstring's first sentence) and, for each
top-level package or module, which of envkit's packages its modules may import (the last
paragraph of its docstring). `tests/unit/test_module_map.py` fails when this file and the code
disagree, or when an import crosses a line not listed. Packages are in floors, lowest first:
each may import only from floors below it. The flow they implement:
[architecture.md](architecture.md).
"""
MAY_IMPORT = re.compile(r"May import: (.+?)\.?\s*$", re.S)
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`(])")


def _docstring(path: Path) -> str:
    return ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""


def may_import(path: Path) -> str | None:
    """The rule in a docstring's last paragraph, as written."""
    last = _docstring(path).strip().split("\n\n")[-1]
    found = MAY_IMPORT.fullmatch(last.strip())
    return " ".join(found.group(1).split()) if found else None


def summary(path: Path) -> str:
    """The docstring's first sentence, on one line."""
    first = " ".join(_docstring(path).strip().split("\n\n")[0].split())
    if not first:
        raise SystemExit(f"{path.relative_to(REPO)} has no docstring: write one")
    sentence = SENTENCE_END.split(first, maxsplit=1)[0].rstrip(":;, ")
    return sentence if sentence.endswith((".", "!", "?")) else sentence + "."


def _units() -> list[tuple[str, Path]]:
    """(unit, the file holding its rule): top-level modules and packages."""
    found = []
    for path in sorted(PACKAGE.iterdir()):
        if path.is_dir() and (path / "__init__.py").is_file() and not path.name.startswith("_"):
            found.append((path.name, path / "__init__.py"))
        elif path.suffix == ".py" and path.name not in ("__init__.py", "__main__.py"):
            found.append((path.stem, path))
    return found


def _floors(rules: dict[str, str]) -> dict[str, int]:
    """Each unit's floor: one above the highest it may import; "any" above everything."""
    floors: dict[str, int] = {}

    def floor(unit: str, seen: tuple[str, ...] = ()) -> int:
        if unit in floors:
            return floors[unit]
        rule = rules[unit]
        if rule.startswith("nothing"):
            value = 0
        elif rule.startswith("any"):
            others = [u for u in rules if not rules[u].startswith("any")]
            value = 1 + max(floor(u, (*seen, unit)) for u in others)
        else:
            below = [w.strip() for w in rule.split(",")]
            value = 1 + max(floor(u, (*seen, unit)) for u in below if u not in seen)
        floors[unit] = value
        return value

    for unit in rules:
        floor(unit)
    return floors


def _package_lines(folder: Path, depth: int) -> list[str]:
    lines = []
    indent = "  " * depth
    for path in sorted(folder.iterdir()):
        rel = path.relative_to(REPO)
        if path.is_dir() and (path / "__init__.py").is_file():
            lines.append(f"{indent}- `{rel}/`: {summary(path / '__init__.py')}")
            lines += _package_lines(path, depth + 1)
        elif path.suffix == ".py" and path.name not in ("__init__.py", "__main__.py"):
            lines.append(f"{indent}- `{rel}`: {summary(path)}")
    return lines


def module_map() -> str:
    """The whole of docs/module-map.md."""
    units = _units()
    rules = {}
    for unit, path in units:
        rule = may_import(path)
        if rule is None:
            raise SystemExit(f"{path.relative_to(REPO)}: end its docstring with 'May import: ...'")
        rules[unit] = rule
    floors = _floors(rules)
    lines = [INTRO]
    for unit, path in sorted(units, key=lambda u: (floors[u[0]], u[0])):
        if path.name == "__init__.py":
            rel = f"{path.parent.relative_to(REPO)}/"
            lines.append(f"- **`{rel}`** (may import: {rules[unit]}): {summary(path)}")
            lines += _package_lines(path.parent, 1)
        else:
            rel = str(path.relative_to(REPO))
            lines.append(f"- **`{rel}`** (may import: {rules[unit]}): {summary(path)}")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    new = module_map()
    current = DOC.read_text(encoding="utf-8") if DOC.is_file() else ""
    if "--check" in argv:
        if new != current:
            print(f"{DOC.relative_to(REPO)} is stale: run `{COMMAND}`", file=sys.stderr)
            return 1
        return 0
    if new != current:
        DOC.write_text(new, encoding="utf-8")
        print(f"wrote {DOC.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
