"""What a project's lock (uv.lock, poetry.lock, pdm.lock: each a TOML list of [[package]]) pins,
as a graph: which of its packages the project reaches, and which it reaches only through torch
or its companions (left to envkit's torch layer, which installs torch's own build of them, and
the companions at the lock's versions beside it). The lock's torch must be the release envkit
installs."""

from __future__ import annotations

import re
from typing import Any

from packaging.utils import canonicalize_name

from envkit.catalog.compat import COMPANIONS
from envkit.errors import ConfigError, in_file
from envkit.plan.project.torch_lines import TORCHES, TorchContext

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")  # a requirement string's name


def line_of(text: str, needle: str, default: int = 1) -> int:
    """The first line that starts with NEEDLE (a package's own `name = "torch"`, not an
    override's `{ name = "torch", … }` above it), else the first that holds it."""
    lines = list(enumerate(text.splitlines(), 1))
    starts = (n for n, line in lines if line.lstrip().startswith(needle))
    return next(starts, next((n for n, line in lines if needle in line), default))


def lock_error(name: str, text: str, needle: str, problem: str, fix: str) -> ConfigError:
    return in_file(name, line_of(text, needle), problem, fix)


def packages_by_name(lock: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    by_name: dict[str, list[dict[str, Any]]] = {}
    for package in lock.get("package") or ():
        if isinstance(package, dict) and isinstance(package.get("name"), str):
            by_name.setdefault(canonicalize_name(package["name"]), []).append(package)
    return by_name


def names(deps: Any) -> set[str]:
    """Dependency names however a lock lists them: uv's {name = …} tables, Poetry's `name =
    constraint` keys, PDM's and Poetry's extras' requirement strings."""
    if isinstance(deps, dict):
        return {canonicalize_name(str(n)) for n in deps}
    found: set[str] = set()
    for dep in deps or ():
        spelled = dep.get("name") if isinstance(dep, dict) else NAME.match(str(dep))
        if spelled:
            found.add(canonicalize_name(str(spelled if isinstance(dep, dict) else spelled[0])))
    return found


def edges(
    package: dict[str, Any], extras: tuple[str, ...], groups: tuple[str, ...] = ()
) -> set[str]:
    optional = package.get("optional-dependencies") or package.get("extras") or {}
    grouped = package.get("dev-dependencies") or {}  # uv.lock's dependency groups
    found = names(package.get("dependencies"))
    for extra in extras:
        found |= names(optional.get(extra) if isinstance(optional, dict) else ())
    for group in groups:
        found |= names(grouped.get(group) if isinstance(grouped, dict) else ())
    return found


def _graph(packages: dict[str, list[dict[str, Any]]]) -> dict[str, set[str]]:
    # Every extra of a dependency counts: more reached means fewer packages left out, never a
    # package the project needs left out.
    graph: dict[str, set[str]] = {}
    for name, versions in packages.items():
        for package in versions:
            optional = package.get("optional-dependencies") or package.get("extras") or {}
            extras = tuple(optional) if isinstance(optional, dict) else ()
            graph.setdefault(name, set()).update(edges(package, extras))
    return graph


def _reachable(graph: dict[str, set[str]], start: set[str], avoid: frozenset[str]) -> set[str]:
    seen: set[str] = set()
    queue = [n for n in start if n not in avoid]
    while queue:
        name = queue.pop()
        if name in seen:
            continue
        seen.add(name)
        queue += [n for n in graph.get(name, ()) if n not in avoid and n not in seen]
    return seen


def reached(
    packages: dict[str, list[dict[str, Any]]], start: set[str], own: set[str]
) -> tuple[set[str], set[str]]:
    """(every package of the lock START reaches, those it reaches without going through torch
    or a companion of torch), OWN (the project's own packages) left out of both. An extra's
    packages that the lock does not hold (Poetry lists every extra a package offers) are not
    reached."""
    graph = _graph(packages)
    held = set(packages) - own
    every = _reachable(graph, start, frozenset()) & held
    torch = frozenset(every & TORCHES)
    return every, _reachable(graph, start, torch) & held


def companion_pins(packages: dict[str, list[dict[str, Any]]], every: set[str]) -> tuple[str, ...]:
    """The companions of torch the lock reaches, at its versions: the torch layer installs
    them beside torch from torch's own index (a pytorch image carries its own), never the
    lock's wheel over that torch."""
    return tuple(
        f"{name}=={str(packages[name][0].get('version', '')).split('+')[0]}"
        for name in sorted(every)
        if name in COMPANIONS and packages.get(name)
    )


def check_torch(
    name: str, text: str, versions: list[dict[str, Any]], context: TorchContext, relock: str
) -> None:
    for package in versions:
        version = str(package.get("version", "")).split("+")[0]
        if context.none or (context.version is not None and version != context.version):
            raise lock_error(
                name,
                text,
                'name = "torch"',
                f"the lock pins torch {version}; envkit installs {context.said()}",
                f"set `torch:` in envkit.yaml to the locked release, or lock the one envkit "
                f"installs ({relock})",
            )
