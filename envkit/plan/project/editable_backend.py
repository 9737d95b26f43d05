"""The build backend of each project folder installed editable at the container's first start:
its pyproject.toml's `[build-system] requires` (PEP 518), or PEP 517's default, setuptools and
wheel, for a folder with a setup.py and no such table. The image holds it, so the first-start
install builds without build isolation and asks no index: a cluster node, or a box whose mirror
answered only at build time, often has none to ask."""

from __future__ import annotations

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from envkit.config.load import LoadedSpec, Loc
from envkit.errors import FieldError
from envkit.files import TOMLDecodeError, toml_loads
from envkit.plan.project.project_files import ProjectReader
from envkit.plan.project.torch_lines import TORCHES

PEP517_DEFAULT = ("setuptools>=40.8.0", "wheel")


def editable_backend(loaded: LoadedSpec, folders: tuple[str, ...], loc: Loc) -> tuple[str, ...]:
    """The requirements the FOLDERS' (relative to envkit.yaml's folder) build backends need, in
    order, once each. A folder with neither pyproject.toml nor setup.py needs none (the first
    start says it skipped it); a pyproject.toml whose table is not a list of requirements is
    refused at LOC, naming the file."""
    reader = ProjectReader(loaded)
    wanted: list[str] = []
    for folder in folders:
        pyproject = reader.root / folder / "pyproject.toml"
        if pyproject.is_file():
            name, text = reader.read(loc, f"{folder}/pyproject.toml", "pyproject.toml")
            wanted += _requires(name, text, loaded, loc)
        elif (reader.root / folder / "setup.py").is_file():
            wanted += PEP517_DEFAULT
    # torch and its companions are envkit's torch layer's (or the base's): never the backend's
    return tuple(
        r for r in dict.fromkeys(wanted) if canonicalize_name(Requirement(r).name) not in TORCHES
    )


def _requires(name: str, text: str, loaded: LoadedSpec, loc: Loc) -> list[str]:
    try:
        table = toml_loads(text).get("build-system")
    except TOMLDecodeError as exc:
        error = FieldError(f"{name} is not valid TOML ({exc})", "fix the file")
        raise loaded.error(loc, error, name) from None
    if not isinstance(table, dict) or "requires" not in table:
        return list(PEP517_DEFAULT)
    requires = table["requires"]
    if not isinstance(requires, list) or not all(isinstance(r, str) for r in requires):
        error = FieldError(
            f"{name}: [build-system] requires is not a list of requirement strings",
            'write it as PEP 518 does: requires = ["setuptools>=61", "wheel"]',
        )
        raise loaded.error(loc, error, requires)
    for requirement in requires:
        try:
            Requirement(requirement)
        except InvalidRequirement as exc:
            error = FieldError(
                f"{name}: [build-system] requires {requirement!r} is not a requirement "
                f"({str(exc).splitlines()[0]})",
                "fix the line in pyproject.toml",
            )
            raise loaded.error(loc, error, requirement) from None
    return [str(Requirement(r)) for r in requires]
