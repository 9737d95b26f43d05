"""`python.project`: the project's pyproject.toml, and its uv.lock when there is one.

Without a lock, [project].dependencies (and the extras envkit.yaml names) are installed like a
requirements file. With a uv.lock beside pyproject.toml the image installs exactly what the lock
pins: `uv export --frozen` inside the build turns it into hashed requirement lines, installed
with --no-deps --require-hashes, so nothing is resolved again and every file is checked.

torch stays envkit's to pin (its CUDA build is checked): a torch the project asks for must admit
the torch envkit installs, a locked torch must be that release, and the lock's torch with what
only torch needs (its CUDA libraries, triton) is not installed again from the lock. Everything is
checked here, at plan time, with the file's own line: a stale lock, a package the lock takes
from outside the project or from git unpinned. A git package pinned to its commit installs at
it; one from a folder of the project is installed editable at first start, as a member is."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from envkit.config.python_section import PythonSection
from envkit.errors import ConfigError, file_issue, in_file
from envkit.files import TOMLDecodeError, toml_loads
from envkit.plan.project.conda_locks import git_pin
from envkit.plan.project.lock_graph import (
    check_torch,
    companion_pins,
    edges,
    lock_error,
    packages_by_name,
    reached,
)
from envkit.plan.project.manager_locks import EXPORTERS, read_manager_lock
from envkit.plan.project.package_sources import package_sources
from envkit.plan.project.project_files import ProjectFile, ProjectReader
from envkit.plan.project.project_requirements import (
    dynamic_dependencies,
    line_of_string,
    project_requirements,
)
from envkit.plan.project.requirement_lines import VCS, FileReading
from envkit.plan.project.torch_lines import TorchContext, judge_pip

if TYPE_CHECKING:
    from envkit.config.load import LoadedSpec

LOC = ("python", "project")
HASHED_SOURCES = ("registry", "url")  # files the lock names with their sha256
FOLDER_SOURCES = ("editable", "directory")  # a folder (of the project: editable at first start)
RELOCK = "run `uv lock` in the project and commit uv.lock"


@dataclass(frozen=True)
class PythonProject:
    folder: str  # project-relative ('.' for the folder of envkit.yaml)
    pyproject: ProjectFile
    lock: ProjectFile | None
    extras: tuple[str, ...]
    requirements: tuple[str, ...]  # without a lock: what pyproject.toml names, torch left out
    not_from_lock: tuple[str, ...]  # with a lock: torch, its companions, what only they need
    locked: int  # packages the lock installs
    companions: tuple[str, ...] = ()  # torchvision==X...: installed beside envkit's torch
    needs_git: bool = False  # a git+ requirement
    members: tuple[ProjectFile, ...] = ()  # a uv workspace's members' pyproject.toml files
    installed: tuple[str, ...] = ()  # the members' folders (the lock's) the project installs
    notes: tuple[str, ...] = ()  # torch's lines left to envkit's torch layer, each at its line
    sources: tuple[str, ...] = ()  # pip's options for the project's own (package_sources.py)
    git: tuple[str, ...] = ()  # the lock's git packages, `NAME @ git+URL@COMMIT`: no sha256
    local: tuple[tuple[str, str], ...] = ()  # (name, folder) from the project's own folders
    groups: tuple[str, ...] = ()  # python.groups: the dependency groups installed too

    @property
    def target(self) -> str:
        """Where pyproject.toml and uv.lock are in the image."""
        return "/opt/envkit/project" + ("" if self.folder == "." else f"/{self.folder}")

    @property
    def export_args(self) -> tuple[str, ...]:
        """`uv export`'s arguments: the lock as hashed requirement lines, nothing resolved."""
        args = [
            "--frozen",
            "--no-default-groups",
            "--no-emit-workspace",
            "--no-header",
            "--no-annotate",
        ]
        args += ["--format", "requirements.txt"]
        if self.members and "." not in self.installed:  # a virtual root: every member's
            args += ["--all-packages"]  # dependencies, as `uv sync --all-packages` has them
        for extra in self.extras:
            args += ["--extra", extra]
        for group in self.groups:
            args += ["--group", group]
        git = (line.split(" @ ")[0] for line in self.git)
        for name in (*self.not_from_lock, *git, *(name for name, _ in self.local)):
            args += ["--no-emit-package", name]
        return tuple(args)


def _toml(name: str, text: str) -> dict[str, Any]:
    try:
        return toml_loads(text)
    except TOMLDecodeError as exc:
        found = re.search(r"line (\d+)", str(exc))
        line = int(found.group(1)) if found else 1
        raise in_file(name, line, f"not valid TOML: {exc}", "fix the file's syntax") from None


def _check_wanted(
    name: str, text: str, wanted: list[str], context: TorchContext
) -> tuple[list[str], FileReading]:
    """The requirements to install, and what the lines asked besides: each parsed as pip does
    (PEP 508, either quote style), torch's and its companions' lines judged against envkit's
    torch; every problem at once."""
    requirements: list[str] = []
    found = FileReading()
    for item in wanted:
        line = line_of_string(text, str(item))
        try:
            requirement = Requirement(str(item))
        except InvalidRequirement as exc:
            problem = f"not a requirement: {str(exc).splitlines()[0]}"
            fix = "write it as PEP 508 does: NAME[extras] VERSIONS ; MARKERS, or NAME @ URL"
            found.issues.append(file_issue(name, line, str(item)[:120], problem, fix))
            continue
        found.needs_git |= bool(requirement.url and requirement.url.startswith(VCS))
        verdict = judge_pip(requirement, context)
        if verdict.action == "refuse":
            found.issues.append(file_issue(name, line, str(item)[:120], verdict.why, verdict.fix))
        elif verdict.action == "keep":
            requirements.append(str(requirement))
            found.notes += [f"{name}:{line}: {verdict.why}"] if verdict.said else []
        else:  # dropped from this install: said at its line, as a file's line is
            found.notes.append(f"{name}:{line}: {verdict.why}")
            found.companions += [verdict.companion] if verdict.companion else []
    if found.issues:
        raise ConfigError(name, found.issues)
    return requirements, found


def workspace_members(lock: dict[str, Any]) -> dict[str, str]:
    """A workspace's members: {name: its folder, relative to the workspace root}. `uv export
    --frozen` needs each member's pyproject.toml (not its sources: the members themselves are
    the workspace, mounted, not installed from the lock)."""
    named = {canonicalize_name(str(m)) for m in (lock.get("manifest") or {}).get("members") or ()}
    found: dict[str, str] = {}
    for package in lock.get("package") or ():
        member = canonicalize_name(str(package.get("name"))) if isinstance(package, dict) else None
        if member is None or member not in named:
            continue
        source = package.get("source") or {}
        folder = next(
            (source[k] for k in ("editable", "virtual", "directory") if k in source), None
        )
        if isinstance(folder, str):
            found[member] = folder
    return found


def _check_fresh(name: str, text: str, root: dict[str, Any], project: dict[str, Any]) -> None:
    """The lock was made for the dependencies pyproject.toml names now (by name: a changed
    version bound is uv's to judge, a package added or removed is plain). Dynamic
    dependencies are the build's to decide, and uv's lock records what it decided."""
    if dynamic_dependencies(project):
        return
    # the project naming itself (`full = ["p[a]"]`) is its own extras, which uv's lock keeps
    # as such or flattens: not a package either side lacks
    own = canonicalize_name(str(project.get("name") or ""))
    locked = {
        canonicalize_name(d["name"])
        for d in (root.get("metadata") or {}).get("requires-dist") or ()
        if isinstance(d, dict) and "name" in d
    } - {own}
    groups = (project.get("optional-dependencies") or {}).values()
    named = [*(project.get("dependencies") or ()), *(r for group in groups for r in group or ())]
    declared = {canonicalize_name(Requirement(r).name) for r in named} - {own}
    if locked != declared:
        change = sorted(f"+{n}" for n in declared - locked)
        change += sorted(f"-{n}" for n in locked - declared)
        problem = f"out of date with pyproject.toml ({', '.join(change)})"
        raise lock_error(name, text, "requires-dist", problem, RELOCK)


def _check_sources(
    name: str, text: str, versions: list[dict[str, Any]]
) -> tuple[list[str], list[tuple[str, str]]]:
    """(the lock's git packages as pip's requirements at their commits, its packages from a
    folder of the project with that folder: installed editable at first start, as `uv sync`
    has them); any other source without a sha256 (outside the project, unpinned git) refused."""
    git, folders = [], []
    for package in versions:
        source = package.get("source") or {}
        kind = next(iter(source), "")
        pin = git_pin(str(source["git"])) if kind == "git" else None
        local = posixpath.normpath(str(source[kind])) if kind in FOLDER_SOURCES else ""
        if pin is not None:
            git.append(f"{package['name']}{pin}")
        elif local and local != ".." and not local.startswith(("../", "/")):
            folders.append((str(package["name"]), local))
        elif kind not in HASHED_SOURCES:
            where = f"{kind} {source.get(kind, '')}".strip() or "nowhere"
            problem = f"the lock takes {package['name']} from {where}: not a file with a sum the "
            problem += "build can check"
            fix = "publish it to an index (or a URL), or install it in build.steps"
            raise lock_error(name, text, f'name = "{package["name"]}"', problem, fix)
    return git, folders


def _from_lock(
    name: str, text: str, project: dict[str, Any], section: PythonSection, context: TorchContext
) -> tuple[
    tuple[str, ...],
    int,
    dict[str, str],
    tuple[str, ...],
    tuple[str, ...],
    tuple[tuple[str, ...], tuple[tuple[str, str], ...]],
]:
    """(the lock's packages not installed from it, how many it installs, the workspace's
    members and their folders, the folders of those the project installs, its companions of
    torch pinned, (its git packages at their commits, its packages from the project's own
    folders)), after every check.
    A workspace's members are not installed from the lock: what they depend on is."""
    lock = _toml(name, text)
    if lock.get("version") != 1:
        raise lock_error(name, text, "version", "a uv.lock format envkit does not read", RELOCK)
    packages = packages_by_name(lock)
    members = workspace_members(lock)
    named = (lock.get("manifest") or {}).get("members") or ()
    for missing in sorted({canonicalize_name(str(m)) for m in named} - set(members)):
        problem = f"names the workspace member {missing}, but holds no package of it"
        raise lock_error(name, text, "members", problem, RELOCK)
    root = canonicalize_name(str(project.get("name", "")))
    roots = packages.get(root)
    if not roots and not members:
        raise lock_error(name, text, "[[package]]", f"no package {project.get('name')}", RELOCK)
    start: set[str] = set()
    if roots:  # the project's own dependencies, and of the members those reach, as `uv sync`
        # has them (a member behind an extra or group not chosen is not installed, nor what
        # it needs)
        _check_fresh(name, text, roots[0], project)
        start |= edges(roots[0], section.extras, section.groups)
        reach = reached(packages, start, {root})[0] | {root}
        installed = {m: folder for m, folder in members.items() if m in reach}
    else:  # a virtual root: every member
        installed = members
    for member in set(installed) - {root}:  # the root's own: with its chosen extras only
        start |= {member} | edges(packages[member][0], ())
    every, kept = reached(packages, start, {root, *installed})
    if "torch" in every:
        check_torch(name, text, packages["torch"], context, "`uv add torch==<it>`")
    git: list[str] = []
    local: list[tuple[str, str]] = []
    for package_name in sorted(kept):
        pinned, folders = _check_sources(name, text, packages.get(package_name, []))
        git, local = git + pinned, local + folders
    installed_folders = tuple(sorted(installed.values()))
    pins = companion_pins(packages, every)
    by_source = (tuple(git), tuple(local))
    return tuple(sorted(every - kept)), len(kept), members, installed_folders, pins, by_source


def read_python_project(loaded: LoadedSpec, context: TorchContext) -> PythonProject | None:
    """The project python.project names, read and checked (None where it names none)."""
    section = loaded.spec.python
    if not isinstance(section, PythonSection) or section.project is None:
        return None
    reader = ProjectReader(loaded)
    prefix = "" if section.project == "." else f"{section.project}/"
    name, text = reader.read(LOC, f"{prefix}pyproject.toml", "pyproject.toml")
    data = _toml(name, text)
    locks = (reader.root / f"{prefix}{lock}" for lock in ("uv.lock", *EXPORTERS))
    lock_file = next((p.name for p in locks if p.exists() or p.is_symlink()), None)
    asked, wanted = [], FileReading()
    requirements: list[str] = []
    dynamic = dynamic_dependencies(data.get("project") or {})
    if lock_file != "uv.lock" or not dynamic:  # a uv.lock holds what a dynamic build decided
        asked = project_requirements(name, text, data, section.extras, section.groups)
        requirements, wanted = _check_wanted(name, text, asked, context)
    pyproject = ProjectFile(name, text)
    sources = package_sources(name, text, data, tuple(loaded.spec.mirrors.trusted_hosts))
    if lock_file is None:
        return PythonProject(
            section.project,
            pyproject,
            None,
            section.extras,
            tuple(requirements),
            (),
            0,
            tuple(dict.fromkeys(wanted.companions)),
            wanted.needs_git,
            notes=tuple(wanted.notes),
            sources=sources,
            groups=section.groups,
        )
    lock = ProjectFile(*reader.read(LOC, f"{prefix}{lock_file}", lock_file))
    # locked: nothing from pyproject.toml's lines; (left out, count, companions) from the lock
    locked_project = partial(
        PythonProject,
        section.project,
        pyproject,
        lock,
        section.extras,
        (),
        sources=sources,
        groups=section.groups,
    )
    if lock_file != "uv.lock":
        start = {str(canonicalize_name(Requirement(r).name)) for r in asked}
        own = canonicalize_name(str((data.get("project") or {}).get("name", "")))
        left_out, locked, pins, git = read_manager_lock(lock.path, lock.text, start, own, context)
        return locked_project(left_out, locked, pins, bool(git), git=git)
    return _uv_locked(reader, prefix, section, lock, data, context, locked_project)


def _uv_locked(
    reader: ProjectReader,
    prefix: str,
    section: PythonSection,
    lock: ProjectFile,
    data: dict[str, Any],
    context: TorchContext,
    locked_project: Callable[..., PythonProject],
) -> PythonProject:
    """The project with its uv.lock: what the lock installs, a workspace's members' files."""
    try:
        left_out, locked, members, installed, pins, (git, local) = _from_lock(
            lock.path, lock.text, data.get("project") or {}, section, context
        )
    except (InvalidRequirement, KeyError, TypeError, AttributeError) as exc:
        raise in_file(lock.path, 1, f"not a uv.lock envkit can read ({exc})", RELOCK) from None
    folders = sorted(set(members.values()) - {"."})
    for folder in folders:  # a git submodule not checked out: said as that, at the lock's line
        if not (reader.root / prefix / folder / "pyproject.toml").is_file():
            problem = f"the workspace member {folder} has no pyproject.toml in the project"
            fix = "check it out (a git submodule: `git submodule update --init`), or relock"
            raise lock_error(lock.path, lock.text, f'"{folder}"', problem, fix)
    member_files = tuple(
        ProjectFile(*reader.read(LOC, f"{prefix}{folder}/pyproject.toml", "pyproject.toml"))
        for folder in folders
    )
    return locked_project(
        left_out,
        locked,
        pins,
        bool(git),
        members=member_files,
        installed=installed,
        git=git,
        local=local,
    )
