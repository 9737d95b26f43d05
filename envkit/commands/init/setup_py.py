"""What a setup.py says without running it: the `install_requires` of its `setup(...)` call where
that is a literal list of strings, written in the call or bound once to a module-level name
(`REQUIRED_PACKAGES = [...]`, as SAM 2's), or setup.cfg's beside a bare `setup()`, read from its
syntax tree (as dependabot reads setup.py; never executed), and whether it builds CUDA
extensions (torch.utils.cpp_extension's CUDAExtension, which needs nvcc: the devel image). A
list computed when it runs (read from a file, built in a loop) is not read: init says so."""

from __future__ import annotations

import ast
import configparser
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from envkit.errors import FieldError
from envkit.files import read_regular
from envkit.plan.project.project_files import file_limit


@dataclass(frozen=True)
class SetupPy:
    requires: tuple[str, ...] | None  # None: not a literal list (decided when it runs)
    cuda_extensions: bool
    why: str = ""  # where requires is None: why it was not read
    name: str = ""  # its literal name=
    extras: dict[str, tuple[str, ...]] | None = None  # its literal extras_require


def read_setup_py(path: Path) -> SetupPy:
    """The file's literal install_requires and CUDA extensions, or why they are not read: a file
    that is not Python 3, a list computed when it runs, or keywords passed as **kwargs; a
    setup() naming none takes setup.cfg's."""
    try:
        tree = ast.parse(read_regular(path, file_limit(), "setup.py").decode("utf-8"))
    except (FieldError, UnicodeDecodeError, SyntaxError, ValueError) as exc:
        return SetupPy(None, False, f"not readable as Python 3 ({type(exc).__name__})")
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and _called(n) == "setup"]
    cuda = any(
        (isinstance(n, ast.Name) and n.id == "CUDAExtension")
        or (isinstance(n, ast.Attribute) and n.attr == "CUDAExtension")
        for n in ast.walk(tree)
    )
    if len(calls) != 1:
        return SetupPy(None, cuda, "no single setup(...) call to read")
    constants = _constants(tree)
    requires = _install_requires(calls[0], constants)
    if requires is None:
        return SetupPy(None, cuda, "its install_requires is decided when it runs")
    name = _literal(calls[0], "name", constants)
    extras = _literal(calls[0], "extras_require", constants)
    return SetupPy(
        requires or _setup_cfg(path.parent / "setup.cfg"),
        cuda,
        name=name if isinstance(name, str) else "",
        extras=_extras(extras),
    )


def _extras(value: object) -> dict[str, tuple[str, ...]] | None:
    """extras_require as {extra: requirements}, where it is a literal dict of lists."""
    if not isinstance(value, dict):
        return None
    found = {
        str(extra): tuple(r.strip() for r in wanted if r.strip())
        for extra, wanted in value.items()
        if isinstance(wanted, (list, tuple)) and all(isinstance(r, str) for r in wanted)
    }
    return found if len(found) == len(value) else None


def _setup_cfg(path: Path) -> tuple[str, ...]:
    """setup.cfg's [options] install_requires, one per line as setuptools reads them where
    setup() names none (SAM's and MONAI's setup.py is a bare `setup()`); () without one."""
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(read_regular(path, file_limit(), "setup.cfg").decode("utf-8"))
    except (FieldError, UnicodeDecodeError, configparser.Error):
        return ()
    value = parser.get("options", "install_requires", fallback="")
    lines = (line.split("#", 1)[0].strip() for line in value.splitlines())
    return tuple(line for line in lines if line and not line.startswith("file:"))


def _called(node: ast.Call) -> str:
    func = node.func
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else ""


def _constants(tree: ast.Module) -> dict[str, ast.expr]:
    """Module-level names bound once, by a plain `NAME = value`: a name bound anywhere else
    too, or changed in place (`NAME += ...`, `NAME.append(...)`), is decided when it runs."""
    changes = Counter(
        node.id if isinstance(node, ast.Name) else node.func.value.id  # type: ignore[attr-defined]
        for node in ast.walk(tree)
        if (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store))
        or (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
        )
    )
    return {
        node.targets[0].id: node.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and changes[node.targets[0].id] == 1
    }


def _literal(call: ast.Call, keyword: str, constants: dict[str, ast.expr]) -> object:
    """The call's KEYWORD as a literal (or the literal its name is bound to); None otherwise."""
    for given in (k.value for k in call.keywords if k.arg == keyword):
        if isinstance(given, ast.Name):
            given = constants.get(given.id, given)
        try:
            return ast.literal_eval(given)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return None
    return None


def _install_requires(call: ast.Call, constants: dict[str, ast.expr]) -> tuple[str, ...] | None:
    """The call's literal install_requires, or the literal its name is bound to; () without
    one; None where it is not a literal (or where **kwargs may carry it)."""
    if any(keyword.arg is None for keyword in call.keywords):
        return None
    if all(keyword.arg != "install_requires" for keyword in call.keywords):
        return ()
    value = _literal(call, "install_requires", constants)
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return tuple(v.strip() for v in value if v.strip())
    return None
