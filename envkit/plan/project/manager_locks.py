"""poetry.lock and pdm.lock beside the project's pyproject.toml, installed exactly: in the build,
Poetry's and PDM's own exporters (`poetry export`, `pdm export`, at pinned releases, fetched by
the image's uv from the mirror) write the lock as hashed requirement lines, so envkit writes no
grammar of either lock. Read here only for what the plan must know before the build (the lock's
torch, what only torch needs, what no hash can check), as lock_graph.py reads a uv.lock."""

from __future__ import annotations

from typing import Any, NamedTuple

from envkit.errors import ConfigError, file_issue, in_file
from envkit.files import TOMLDecodeError, toml_loads
from envkit.plan.project.conda_locks import git_pin
from envkit.plan.project.lock_graph import (
    check_torch,
    companion_pins,
    line_of,
    packages_by_name,
    reached,
)
from envkit.plan.project.torch_lines import TorchContext

# The exporters' own dependencies as they were on this day (uv's --exclude-newer): the same
# tool environment for every build, whatever has been published since.
AS_OF = "2025-11-01T00:00:00Z"


class Exporter(NamedTuple):
    tool: tuple[str, ...]  # `uv tool run`'s arguments: hashed requirement lines, --output after
    extra: str  # the exporter's option naming one of the project's extras
    relock: str
    env: tuple[str, ...] = ()  # set for the exporter alone
    group: str = "--with"  # its option naming a dependency group
    only_main: str = ""  # its option leaving out every group: dropped where one is named


EXPORTERS = {
    # Poetry's index lines are left out: every file comes through the mirror, held to its hash.
    "poetry.lock": Exporter(
        (
            *("--from", "poetry==2.2.1", "--with", "poetry-plugin-export==1.9.0", "poetry"),
            *("export", "--format", "requirements.txt", "--without-urls"),
        ),
        "--extras",
        "`poetry lock`",
    ),
    # PDM would make a virtualenv in the project to export from; the image's Python does.
    "pdm.lock": Exporter(
        ("--from", "pdm==2.26.1", "pdm", "export", "--prod", "--format", "requirements"),
        "--group",
        "`pdm lock`",
        ("PDM_USE_VENV=false", "PDM_CHECK_UPDATE=false"),
        "--group",
        # --prod leaves out every dev group and refuses a named one; a named one alone
        # leaves out the others
        "--prod",
    ),
}


def _git(package: dict[str, Any]) -> str | None:
    """A Poetry or PDM lock's git package at the commit it resolved, as pip's requirement
    (`NAME @ git+https://HOST/PATH@COMMIT`); None for any other source, or an unpinned one."""
    source = package.get("source") or {}
    if isinstance(source, dict) and source.get("type") == "git":  # Poetry's
        url, commit = source.get("url", ""), source.get("resolved_reference", "")
        sub = source.get("subdirectory") or ""
    else:  # PDM's
        url, commit = package.get("git", ""), package.get("revision", "")
        sub = package.get("subdirectory") or ""
    query = f"?subdirectory={sub}" if sub else ""
    pin = git_pin(f"{url}{query}#{commit}") if url and commit else None
    return f"{package['name']}{pin}" if pin else None


def _unhashed(package: dict[str, Any]) -> str | None:
    """Where a lock's package comes from when no hash can check it (a git checkout, a folder
    or file outside the build context); None for an index's or a URL's files."""
    source = package.get("source") or {}
    kind = source.get("type") if isinstance(source, dict) else None  # Poetry's
    if kind in ("git", "directory", "file"):
        return f"{kind} {source.get('url', '')}".strip()
    found = next((k for k in ("git", "path", "editable") if package.get(k)), None)  # PDM's
    return f"{found} {package[found]}" if found else None


def read_manager_lock(
    name: str, text: str, start: set[str], own: str, context: TorchContext
) -> tuple[tuple[str, ...], int, tuple[str, ...], tuple[str, ...]]:
    """(the lock's packages not installed from it, how many it installs, its companions of
    torch pinned, its git packages at their commits: installed apart, as uv.lock's), after
    every check; START: the names pyproject.toml asks for, OWN: the project's own name."""
    exporter = EXPORTERS[name.rsplit("/", 1)[-1]]
    fix = f"run {exporter.relock} in the project and commit {name.rsplit('/', 1)[-1]}"
    try:
        packages = packages_by_name(toml_loads(text))
    except TOMLDecodeError as exc:
        raise in_file(name, 1, f"not valid TOML: {exc}", fix) from None
    every, kept = reached(packages, start, {own})
    if "torch" in every:  # a torch the project asks for, though the lock may not hold it
        check_torch(name, text, packages.get("torch", []), context, exporter.relock)
    locked = [p for n in sorted(kept) for p in packages.get(n, [])]
    git = {p["name"]: pin for p in locked if (pin := _git(p))}
    issues = [
        file_issue(
            name,
            line_of(text, f'name = "{package["name"]}"'),
            package["name"],
            f"the lock takes it from {where}: no sum can check it",
            "publish it to an index (or a URL), or install it in build.steps",
        )
        for package in locked
        if package["name"] not in git and (where := _unhashed(package))
    ]
    if issues:
        raise ConfigError(name, issues)
    left = tuple(sorted((every - kept) | set(git)))  # git's from their commits, not the export
    return left, len(kept) - len(git), companion_pins(packages, every), tuple(git.values())


def export_command(
    lock: str, extras: tuple[str, ...], groups: tuple[str, ...] = ()
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(variables, `uv tool run` arguments) that export LOCK's pins for EXTRAS and GROUPS."""
    exporter = EXPORTERS[lock.rsplit("/", 1)[-1]]
    chosen = tuple(word for extra in extras for word in (exporter.extra, extra))
    chosen += tuple(word for group in groups for word in (exporter.group, group))
    tool = (w for w in exporter.tool if not groups or w != exporter.only_main)
    return exporter.env, ("--exclude-newer", AS_OF, *tool, *chosen)
