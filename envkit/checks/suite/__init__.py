"""The suite: every group of checks, in the order they run, and the modules that register them.
This table is the one list of both (the runner, `list`, the docs and report ordering read it)."""

from __future__ import annotations

import importlib
from typing import Dict, List, Sequence, Tuple

from ..core.location import PACKAGE
from ..core.registry import CheckSpec, select

GROUP_MODULES: Dict[str, Tuple[str, ...]] = {
    "cuda": ("cuda",),
    "gpu": ("gpu", "gpu_run", "gpu_xid", "gpu_links"),
    "tensor": ("tensor",),
    "autograd": ("autograd",),
    "multigpu": ("multigpu",),
    "system": ("system", "lockcheck", "notebook"),
    "bench": ("bench", "p2p", "cpu_bench"),
    "stress": ("stress",),
}
GROUPS: Tuple[str, ...] = tuple(GROUP_MODULES)
MODULES: List[str] = [f"suite.{name}" for names in GROUP_MODULES.values() for name in names]


def load() -> None:
    """Register every check (importing a module runs its @check decorators; torch is imported
    only when a check runs)."""
    for module in MODULES:
        importlib.import_module(f"{PACKAGE}.{module}")


def chosen(
    only: Sequence[str], skip: Sequence[str], bench: bool, stress: bool = False
) -> List[CheckSpec]:
    load()
    return select(only, skip, bench, GROUPS, stress)
