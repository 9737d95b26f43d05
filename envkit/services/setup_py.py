"""What a setup.py says without running it: the `install_requires` of its `setup(...)` call where
that is a literal list of strings (read from its syntax tree, as dependabot reads setup.py;
never executed), and whether it builds CUDA extensions (torch.utils.cpp_extension's
CUDAExtension, which needs nvcc: the devel image). A list computed when it runs (read from a
file, built in a loop) is not read: init says so."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from envkit.errors import FieldError
from envkit.files import read_regular
from envkit.plan.project_files import file_limit


@dataclass(frozen=True)
class SetupPy:
    requires: tuple[str, ...] | None  # None: not a literal list (decided when it runs)
    cuda_extensions: bool


def read_setup_py(path: Path) -> SetupPy | None:
    """The file's literal install_requires and CUDA extensions; None where it cannot be read
    (too large, not UTF-8, not Python)."""
    try:
        tree = ast.parse(read_regular(path, file_limit(), "setup.py").decode("utf-8"))
    except (FieldError, UnicodeDecodeError, SyntaxError, ValueError):
        return None
    requires: tuple[str, ...] | None = None
    cuda = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == "CUDAExtension":
            cuda = True
        if isinstance(node, ast.Attribute) and node.attr == "CUDAExtension":
            cuda = True
        if isinstance(node, ast.Call) and _called(node) == "setup":
            requires = _install_requires(node)
    return SetupPy(requires, cuda)


def _called(node: ast.Call) -> str:
    func = node.func
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else ""


def _install_requires(call: ast.Call) -> tuple[str, ...] | None:
    for keyword in call.keywords:
        if keyword.arg != "install_requires":
            continue
        try:
            value = ast.literal_eval(keyword.value)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return None
        if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
            return tuple(v.strip() for v in value if v.strip())
        return None
    return ()
