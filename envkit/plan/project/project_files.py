"""The project's own dependency files named in envkit.yaml (packages.requirements,
packages.apt_file, conda.file): read once at plan time, each checked, and carried to render.

Every path must stay inside the project (the folder of envkit.yaml) after symlinks are followed, and
be a regular file under a size cap: a FIFO, a device, a symlink out or a huge file is refused with
the line of envkit.yaml that named it. What the files hold is read as pip and conda read it
(plan/project/requirement_lines.py): a project's torch line is envkit's torch when the resolved
torch satisfies it, refused with both values when it cannot (plan/project/torch_lines.py); apt names
by Debian's grammar. Every problem in every file is reported in one run, each at its own line.
Requirements files travel into the build context as pip reads them (hashes and -r/-c includes kept,
torch's lines turned into comments), so a change to one rebuilds only its layer."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import TypeAdapter, ValidationError

from envkit.config.fields import AptPackage, Channel, CondaSpec
from envkit.config.load import explain, parse_yaml
from envkit.errors import ConfigError, FieldError, file_issue, in_file
from envkit.files import read_regular
from envkit.plan.project.conda_explicit import is_explicit, read_explicit
from envkit.plan.project.conda_locks import CondaLockPackages, lock_kind, read_conda_lock
from envkit.plan.project.pipenv import is_pipenv, pipenv_requirements
from envkit.plan.project.requirement_lines import (
    INCLUDE_OPTIONS,
    FileReading,
    RequirementsFile,
    logical_lines,
    option_of,
)
from envkit.plan.project.torch_lines import TorchContext, conda_parts, conda_specifier, judge_conda

if TYPE_CHECKING:
    from envkit.config.load import LoadedSpec, Loc

LIMIT_ENV = "ENVKIT_PROJECT_FILE_LIMIT"
DEFAULT_LIMIT_MIB = 64  # uv.lock files of large projects run to 5 MB: no real project nears this
MAX_FILES = 64  # includes followed, in all
SAFE_PATH = re.compile(r"[A-Za-z0-9_.+-]+(?:/[A-Za-z0-9_.+-]+)*")


def file_limit() -> int:
    """The size bound of a project file, in bytes ($ENVKIT_PROJECT_FILE_LIMIT MiB moves it)."""
    chosen = os.environ.get(LIMIT_ENV, "")
    return (int(chosen) if chosen.isdigit() and int(chosen) > 0 else DEFAULT_LIMIT_MIB) << 20


def limit_hint() -> str:
    return f" (envkit's bound is {file_limit() >> 20} MiB; {LIMIT_ENV}=MIB moves it)"


@dataclass(frozen=True)
class ProjectFile:
    path: str  # relative to the project folder, as in the build context under envkit/project/
    text: str  # as the build reads it (torch's lines turned into comments)


@dataclass(frozen=True)
class RequirementsLayer:
    top: str  # the file envkit.yaml names
    files: tuple[ProjectFile, ...]  # it and every file it includes


@dataclass(frozen=True)
class CondaFile:
    channels: tuple[str, ...]
    dependencies: tuple[str, ...]
    pip: tuple[str, ...]
    lock: CondaLockPackages | None = None  # conda.file is a conda-lock.yml or pixi.lock


@dataclass(frozen=True)
class ProjectFiles:
    requirements: tuple[RequirementsLayer, ...] = ()
    apt: tuple[str, ...] = ()
    conda: CondaFile = CondaFile((), (), ())  # conda.file's
    companions: tuple[str, ...] = ()  # torchvision==X...: installed with envkit's torch
    editable: tuple[str, ...] = ()  # project folders installed editable at first start
    needs_git: bool = False  # a VCS requirement: git in the image
    notes: tuple[str, ...] = ()


class ProjectReader:
    def __init__(self, loaded: LoadedSpec) -> None:
        self.loaded = loaded
        self.root = loaded.path.parent.resolve()

    def read(self, loc: Loc, relative: str, what: str) -> tuple[str, str]:
        """(the project-relative path, the text) of a file envkit.yaml names at `loc`."""
        target = (self.root / relative).resolve()
        with self.loaded.blaming(loc, relative):
            if not target.is_relative_to(self.root):
                raise FieldError(
                    f"{relative} leaves the project (it resolves to {target})",
                    "keep the project's files inside the folder of envkit.yaml (copy it in "
                    "rather than link to it)",
                )
            name = target.relative_to(self.root).as_posix()
            if not SAFE_PATH.fullmatch(name):
                raise FieldError(f"{name} has characters envkit does not copy", "rename the file")
            try:
                data = read_regular(target, file_limit(), what, size_hint=limit_hint())
                return name, data.decode("utf-8")
            except UnicodeDecodeError:
                raise FieldError(f"{what} {name} is not UTF-8 text", "save it as UTF-8") from None


def _requirements(
    reader: ProjectReader, loc: Loc, top: str, context: TorchContext, found: FileReading
) -> RequirementsLayer:
    name, text = reader.read(loc, top, "requirements file")
    files: dict[str, str] = {}
    queue = [(name, text)]
    trusted = tuple(reader.loaded.spec.mirrors.trusted_hosts)
    while queue:
        current, body = queue.pop(0)
        if current in files:
            continue
        if len(files) >= MAX_FILES:
            too_many = FieldError(f"more than {MAX_FILES} included files", "flatten them")
            raise reader.loaded.error(loc, too_many, top)
        if is_pipenv(current):  # a Pipfile(.lock): its lines, then read as any file's
            try:
                body = pipenv_requirements(current, body)
            except ConfigError as exc:
                found.issues += exc.issues
                continue
        rewritten, reading = RequirementsFile(current, body, context, trusted).read()
        files[current] = rewritten
        found.issues += reading.issues
        found.notes += reading.notes
        found.companions += reading.companions
        found.needs_git |= reading.needs_git
        parent = Path(current).parent
        found.editable += [(parent / folder).as_posix() for folder in reading.editable]
        for line, relative in reading.includes:
            try:
                queue.append(reader.read(loc, (parent / relative).as_posix(), "requirements file"))
            except ConfigError as exc:  # said at the including line; the other files still read
                found.issues += [
                    file_issue(current, line, relative, issue.problem, issue.fix)
                    for issue in exc.issues
                ]
    return RequirementsLayer(name, tuple(ProjectFile(p, t) for p, t in files.items()))


def _apt(reader: ProjectReader, relative: str, found: FileReading) -> tuple[str, ...]:
    name, text = reader.read(("packages", "apt_file"), relative, "apt package list")
    packages = []
    for number, line in enumerate(text.splitlines(), 1):
        for word in line.split("#", 1)[0].split():
            try:
                packages.append(check_as(name, number, word, AptPackage))
            except ConfigError as exc:
                found.issues += exc.issues
    return tuple(packages)


def _conda(
    reader: ProjectReader, relative: str, context: TorchContext, found: FileReading
) -> CondaFile:
    name, text = reader.read(("conda", "file"), relative, "conda environment file")
    explicit = is_explicit(text)  # `conda list --explicit`: packages by URL and checksum
    data, lines = ({}, {}) if explicit else parse_yaml(text, name)  # bounded, as envkit.yaml
    environment = reader.loaded.spec.conda.environment if reader.loaded.spec.conda else None
    if environment is not None and (explicit or lock_kind(data) != "pixi"):
        problem = f"{name} is not a pixi.lock: it has no environments to choose from"
        found.issues.append(
            reader.loaded.issue(("conda", "environment"), problem, "remove it", environment)
        )
    if explicit or lock_kind(data) is not None:
        try:
            lock = (
                read_explicit(name, text)
                if explicit
                else read_conda_lock(name, data, lines, environment=environment or "default")
            )
            found.needs_git |= lock.needs_git
            found.editable += lock.editable
            return CondaFile((), (), (), lock)
        except ConfigError as exc:
            found.issues += exc.issues
            return CondaFile((), (), ())
    if not isinstance(data, dict):
        raise in_file(name, 1, "not an environment (a mapping)", "write conda's environment.yml")
    channels = _conda_list(name, data, lines, "channels", Channel, found)
    items = data.get("dependencies") or []
    if not isinstance(items, list):
        raise in_file(name, lines.get(("dependencies",), 1), "dependencies is not a list", "fix it")
    dependencies, pip = [], []
    for index, item in enumerate(items):
        line = lines.get(("dependencies", index), 1)
        if isinstance(item, dict) and set(item) == {"pip"}:
            pip += _conda_pip(reader, name, item.get("pip"), line, context, found)
            continue
        try:
            spec = check_as(name, line, item, CondaSpec)
        except ConfigError as exc:
            found.issues += exc.issues
            continue
        kept = _conda_dependency(name, line, spec, context, found)
        if kept:
            dependencies.append(kept)
    return CondaFile(tuple(channels), tuple(dependencies), tuple(pip))


def _conda_dependency(
    name: str, line: int, spec: str, context: TorchContext, found: FileReading
) -> str | None:
    """The dependency as the environment gets it, or None where envkit provides it."""
    _, package, rest = conda_parts(spec)
    if package == "python":
        _conda_python(name, line, spec, rest, context, found)
        return None
    if package == "pip":
        return spec
    verdict = judge_conda(spec, context)
    if verdict.action == "refuse":
        found.issues.append(file_issue(name, line, spec, verdict.why, verdict.fix))
        return None
    if verdict.action == "drop":
        found.notes.append(f"{name}:{line}: {verdict.why}")
        if verdict.companion:
            found.companions.append(verdict.companion)
        return None
    if verdict.said:  # kept, with what it means beside envkit's torch
        found.notes.append(f"{name}:{line}: {verdict.why}")
    return spec


def _conda_python(
    name: str, line: int, spec: str, rest: str, context: TorchContext, found: FileReading
) -> None:  # the image's own python= is put first by the plan (plan_conda)
    """A file's python spec is the image's Python's to meet, never applied over it: any spec
    conda reads (`=3.11`, `3.11.*`, `<3.13`, `>=3.9,<3.13`) that admits some release of the
    image's Python X.Y is met."""
    if context.python is None:
        found.notes.append(
            f"{name}:{line}: {spec} not applied: the base image fixes its Python (verify "
            "reports the one it has); to have the file's, base.flavor: cuda with `python:`"
        )
        return
    admitted = _admits_python(rest, context.python)
    if admitted is None:
        found.notes.append(
            f"{name}:{line}: {spec} not judged (a spec envkit cannot read); the image's Python "
            f"is {context.python}"
        )
    elif not admitted:
        shown = rest[1:] if rest.startswith("=") and not rest.startswith("==") else rest
        fitting = next((f"3.{m}" for m in range(8, 15) if _admits_python(rest, f"3.{m}")), None)
        problem = f"the environment asks for Python {shown}; the image's is {context.python}"
        fix = f'set `python: "{fitting}"` in envkit.yaml (base.flavor cuda or custom)'
        if not fitting:
            fix = f"change the file's python spec to one Python {context.python} meets"
        found.issues.append(file_issue(name, line, spec, problem, fix))


def _admits_python(rest: str, python: str) -> bool | None:
    """Whether conda's version spec REST admits a release X.Y.Z of Python X.Y (None where it
    cannot be read)."""
    specifier = conda_specifier(rest)
    if specifier is None:
        return None
    return any(specifier.contains(f"{python}.{patch}", prereleases=True) for patch in range(100))


def _conda_pip(
    reader: ProjectReader,
    name: str,
    items: Any,
    line: int,
    context: TorchContext,
    found: FileReading,
) -> list[str]:
    """A conda file's pip: section, read as the requirements file conda hands pip (from the
    file's folder: a `-r requirements.txt` there is that folder's file, its lines taken in)."""
    if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
        found.issues.append(
            file_issue(name, line, None, "the pip section is not a list of lines", "fix it")
        )
        return []
    # the section's lines at their own line numbers in the file, for every issue and note
    text = "\n" * line + "\n".join(items) + "\n"
    rewritten, reading = RequirementsFile(name, text, context).read()
    found.issues += reading.issues
    found.notes += reading.notes
    found.companions += reading.companions
    found.editable += reading.editable
    found.needs_git |= reading.needs_git
    kept = _pip_lines(rewritten)
    for at, included in reading.includes:
        if option_of(items[at - line - 1].strip())[0] in ("-c", "--constraint"):
            problem = "a constraints file in a conda file's pip section"
            fix = "list its pins in the section, or name the file in packages.requirements"
            found.issues.append(file_issue(name, at, included, problem, fix))
            continue
        where = (Path(name).parent / included).as_posix()
        try:
            layer = _requirements(reader, ("conda", "file"), where, context, found)
        except ConfigError as exc:  # said at the including line
            found.issues += [file_issue(name, at, included, i.problem, i.fix) for i in exc.issues]
            continue
        kept += [text for file in layer.files for text in _pip_lines(file.text)]
    return kept


def _pip_lines(text: str) -> list[str]:
    """A requirements file's lines for a conda pip section: one a requirement (continuations
    joined), less comments and the includes (whose files' lines are taken in)."""
    lines = (line for _, _, line in logical_lines(text))
    return [line for line in lines if option_of(line)[0] not in INCLUDE_OPTIONS]


def check_as(name: str, line: int, item: Any, kind: Any) -> str:
    """`item` checked as the same field type an inline entry has, explained the same way."""
    try:
        value: str = TypeAdapter(kind).validate_python(item)
    except ValidationError as exc:
        problem, fix = explain(exc.errors()[0])
        raise in_file(name, line, problem, fix, str(item)[:60]) from None
    return value


def _conda_list(
    name: str, data: dict[str, Any], lines: dict[Any, int], key: str, kind: Any, found: FileReading
) -> list[str]:
    items = data.get(key) or []
    if not isinstance(items, list):
        found.issues.append(
            file_issue(name, lines.get((key,), 1), None, f"{key} is not a list", "write a list")
        )
        return []
    kept = []
    for index, item in enumerate(items):
        try:
            kept.append(check_as(name, lines.get((key, index), 1), item, kind))
        except ConfigError as exc:
            found.issues += exc.issues
    return kept


def read_project_files(loaded: LoadedSpec, context: TorchContext) -> ProjectFiles:
    spec = loaded.spec
    reader = ProjectReader(loaded)
    found = FileReading()
    requirements = tuple(
        _requirements(reader, ("packages", "requirements", index), path, context, found)
        for index, path in enumerate(spec.packages.requirements)
    )
    apt = _apt(reader, spec.packages.apt_file, found) if spec.packages.apt_file else ()
    conda_file = spec.conda.file if spec.conda is not None else None
    conda = _conda(reader, conda_file, context, found) if conda_file else CondaFile((), (), ())
    if found.issues:
        raise ConfigError(found.issues[0].file or str(loaded.path), found.issues)
    return ProjectFiles(
        requirements,
        apt,
        conda,
        companions=tuple(dict.fromkeys(found.companions)),
        editable=tuple(dict.fromkeys(found.editable)),
        needs_git=found.needs_git,
        notes=tuple(found.notes),
    )
