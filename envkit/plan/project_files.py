"""The project's own dependency files named in envkit.yaml (packages.requirements,
packages.apt_file, conda.file): read once at plan time, each checked, and carried to render.

Every path must stay inside the project (the folder of envkit.yaml) after symlinks are followed,
and be a regular file under a size cap: a FIFO, a device, a symlink out or a huge file is
refused with the line of envkit.yaml that named it. What the files hold is checked like the
same entries written inline (torch is envkit's to pin, apt names by Debian's grammar, conda
and pip specs by theirs); a problem inside a file is reported with that file's own line.
Requirements files travel into the build context as they are (hashes and -r/-c includes kept),
so a change to one rebuilds only its layer."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import TypeAdapter, ValidationError

from envkit.config.fields import AptPackage, Channel, CondaSpec, PipRequirement
from envkit.config.load import explain, parse_yaml
from envkit.config.rules import TORCH_NAMES, conda_name, requirement_name
from envkit.errors import ConfigError, ConfigIssue, FieldError
from envkit.files import read_regular

if TYPE_CHECKING:
    from envkit.config.load import LoadedSpec, Loc

FILE_LIMIT = 1024 * 1024  # far above any requirements, apt or environment file
MAX_FILES = 64  # includes followed, in all
SAFE_PATH = re.compile(r"[A-Za-z0-9_.+-]+(?:/[A-Za-z0-9_.+-]+)*")
INCLUDE = re.compile(r"(-r|--requirement|-c|--constraint)(?:\s*=\s*|\s+)(\S+)$")
# Options a requirements file may carry on a requirement's line: the file's own pins.
LINE_OPTIONS = ("--hash",)
TORCH_FIX = "set the top-level `torch:` (and `cuda:`): envkit installs, checks and pins that one"


@dataclass(frozen=True)
class ProjectFile:
    path: str  # relative to the project folder, as in the build context under envkit/project/
    text: str


@dataclass(frozen=True)
class RequirementsLayer:
    top: str  # the file envkit.yaml names
    files: tuple[ProjectFile, ...]  # it and every file it includes


@dataclass(frozen=True)
class ProjectFiles:
    requirements: tuple[RequirementsLayer, ...] = ()
    apt: tuple[str, ...] = ()
    conda_channels: tuple[str, ...] = ()
    conda_dependencies: tuple[str, ...] = ()
    conda_pip: tuple[str, ...] = ()


def in_file(name: str, line: int, problem: str, fix: str, value: str | None = None) -> ConfigError:
    return ConfigError(name, [ConfigIssue(name, line, value, problem, fix)])


class ProjectReader:
    def __init__(self, loaded: LoadedSpec) -> None:
        self.loaded = loaded
        self.root = loaded.path.parent.resolve()

    def read(self, loc: Loc, relative: str, what: str) -> tuple[str, str]:
        """(the project-relative path, the text) of a file envkit.yaml names at `loc`."""
        target = (self.root / relative).resolve()
        if not target.is_relative_to(self.root):
            raise ConfigError(
                str(self.loaded.path),
                [
                    self.loaded.issue(
                        loc,
                        f"{relative} leaves the project (it resolves to {target})",
                        "keep the project's files inside the folder of envkit.yaml (copy it in "
                        "rather than link to it)",
                        relative,
                    )
                ],
            )
        name = target.relative_to(self.root).as_posix()
        if not SAFE_PATH.fullmatch(name):
            raise self.loaded.error(
                loc,
                FieldError(f"{name} has characters envkit does not copy", "rename the file"),
                relative,
            )
        try:
            data = read_regular(target, FILE_LIMIT, what)
            return name, data.decode("utf-8")
        except FieldError as exc:
            raise self.loaded.error(loc, exc, relative) from None
        except UnicodeDecodeError:
            raise self.loaded.error(
                loc, FieldError(f"{what} {name} is not UTF-8 text", "save it as UTF-8"), relative
            ) from None


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """pip's view: backslash continuations joined, comments dropped, with the first line's
    number."""
    lines: list[tuple[int, str]] = []
    pending, start = "", 0
    for number, raw in enumerate(text.splitlines(), 1):
        if not pending:
            start = number
        if raw.endswith("\\"):
            pending += raw[:-1] + " "
            continue
        line = re.sub(r"(^|\s)#.*$", "", pending + raw).strip()
        pending = ""
        if line:
            lines.append((start, line))
    return lines


def _requirements(reader: ProjectReader, loc: Loc, top: str) -> RequirementsLayer:
    name, text = reader.read(loc, top, "requirements file")
    files: dict[str, str] = {}
    queue = [(name, text)]
    while queue:
        current, body = queue.pop(0)
        if current in files:
            continue
        if len(files) >= MAX_FILES:
            raise reader.loaded.error(
                loc, FieldError(f"more than {MAX_FILES} included files", "flatten them"), top
            )
        files[current] = body
        for number, line in _logical_lines(body):
            include = INCLUDE.match(line)
            if include:
                parent = Path(current).parent
                relative = (parent / include.group(2)).as_posix()
                queue.append(reader.read(loc, relative, "requirements file"))
                continue
            _check_requirement(current, number, line)
    return RequirementsLayer(name, tuple(ProjectFile(p, t) for p, t in files.items()))


def _check_requirement(name: str, number: int, line: str) -> None:
    words = line.split()
    if words[0].startswith("-"):
        raise in_file(
            name,
            number,
            f"the option {words[0]} is not taken from a requirements file",
            "indexes come from mirrors: (mirrors.pip); keep only requirements, -r/-c includes "
            "and --hash pins in the file",
            words[0],
        )
    for word in words[1:]:
        if word.startswith("-") and not word.startswith(LINE_OPTIONS):
            raise in_file(name, number, f"the option {word} is not taken", "keep only --hash", word)
    requirement = " ".join(w for w in words if not w.startswith("-"))
    if requirement_name(requirement) in TORCH_NAMES:
        raise in_file(
            name,
            number,
            "torch here would replace the torch envkit pins (its CUDA build unchecked)",
            TORCH_FIX,
            requirement,
        )
    check_as(name, number, requirement, PipRequirement)


def _apt(reader: ProjectReader, relative: str) -> tuple[str, ...]:
    name, text = reader.read(("packages", "apt_file"), relative, "apt package list")
    packages = []
    for number, line in enumerate(text.splitlines(), 1):
        for word in line.split("#", 1)[0].split():
            packages.append(check_as(name, number, word, AptPackage))
    return tuple(packages)


def _conda(reader: ProjectReader, relative: str) -> tuple[tuple[str, ...], ...]:
    name, text = reader.read(("conda", "file"), relative, "conda environment file")
    data, lines = parse_yaml(text, name)  # bounded, as envkit.yaml itself is read
    if not isinstance(data, dict):
        raise in_file(name, 1, "not an environment (a mapping)", "write conda's environment.yml")
    channels = _conda_list(name, data, lines, "channels", Channel)
    dependencies, pip = [], []
    for index, item in enumerate(data.get("dependencies") or ()):
        line = lines.get(("dependencies", index), 1)
        if isinstance(item, dict) and set(item) == {"pip"}:
            for spec in _conda_list(name, item, {}, "pip", PipRequirement, line):
                _not_torch(name, line, requirement_name(spec), spec)
                pip.append(spec)
            continue
        spec = check_as(name, line, item, CondaSpec)
        _not_torch(name, line, conda_name(spec), spec)
        dependencies.append(spec)
    return tuple(channels), tuple(dependencies), tuple(pip)


def _not_torch(name: str, line: int, package: str, spec: str) -> None:
    if package in TORCH_NAMES:
        raise in_file(name, line, "torch here would replace the torch envkit pins", TORCH_FIX, spec)


def check_as(name: str, line: int, item: Any, kind: Any) -> str:
    """`item` checked as the same field type an inline entry has, explained the same way."""
    try:
        value: str = TypeAdapter(kind).validate_python(item)
    except ValidationError as exc:
        problem, fix = explain(exc.errors()[0])
        raise in_file(name, line, problem, fix, str(item)[:60]) from None
    return value


def _conda_list(
    name: str, data: dict[str, Any], lines: dict[Any, int], key: str, kind: Any, line: int = 1
) -> list[str]:
    items = data.get(key) or []
    if not isinstance(items, list):
        raise in_file(name, lines.get((key,), line), f"{key} is not a list", "write a list")
    return [check_as(name, lines.get((key, i), line), item, kind) for i, item in enumerate(items)]


def read_project_files(loaded: LoadedSpec) -> ProjectFiles:
    spec = loaded.spec
    reader = ProjectReader(loaded)
    requirements = tuple(
        _requirements(reader, ("packages", "requirements", index), path)
        for index, path in enumerate(spec.packages.requirements)
    )
    apt = _apt(reader, spec.packages.apt_file) if spec.packages.apt_file else ()
    conda_file = spec.conda.file if spec.conda is not None else None
    channels, dependencies, pip = _conda(reader, conda_file) if conda_file else ((), (), ())
    return ProjectFiles(requirements, apt, channels, dependencies, pip)
