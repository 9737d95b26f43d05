"""`envkit init`: a commented starter envkit.yaml that validates as written."""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

from pydantic import TypeAdapter, ValidationError

from envkit.catalog import compat
from envkit.catalog.mirrors import preset_names
from envkit.config.fields import ProjectName
from envkit.config.schema import SCHEMA_FILE, schema_text
from envkit.errors import EnvkitError, FieldError
from envkit.render import make_environment
from envkit.services.questions import ask
from envkit.services.survey import Survey, survey

FLAVORS = ("pytorch", "cuda", "custom")


@dataclass(frozen=True, kw_only=True)
class InitRequest:
    path: Path  # where envkit.yaml is written (-c/--config)
    name: str | None = None
    preset: str | None = None
    torch: str | None = None
    cuda: str | None = None
    flavor: str = "pytorch"
    force: bool = False
    interactive: bool = False  # ask what no option said (a terminal, without --no-input)


def _default_name(path: Path) -> str:
    folder = path.resolve().parent.name.lower()
    name = re.sub(r"[^a-z0-9_-]+", "-", folder).strip("-_")
    return name[:63] or "my-env"


def _check_choice(option: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise EnvkitError(
            f"--{option}: {value!r} is not one of {', '.join(choices)}",
            f"pass one of: {', '.join(choices)}",
        )


def _project_name(name: str | None, path: Path) -> str:
    project = name or _default_name(path)
    try:
        TypeAdapter(ProjectName).validate_python(project)  # the same rule envkit.yaml's name obeys
    except ValidationError:
        raise EnvkitError(
            f"--name: {project!r} is not a valid project name",
            "use lowercase letters, digits, '-' and '_'",
        ) from None
    return project


def write_starter(request: InitRequest) -> Path:
    path, preset, torch, cuda = request.path, request.preset, request.torch, request.cuda
    flavor = request.flavor
    if preset is not None:
        _check_choice("preset", preset, preset_names())
    _check_choice("flavor", flavor, FLAVORS[:2])
    if path.exists() and not request.force:
        raise EnvkitError(
            f"{path} already exists", "pass --force to overwrite it, or -c/--config elsewhere"
        )
    project = _project_name(request.name, path)  # before any question: a bad --name stops here
    found = survey(path.resolve().parent, Path.home())
    torch = torch or found.locked_torch  # a uv.lock's torch is the one the project runs
    notebook, members = False, tuple[tuple[str, str], ...]()
    if request.interactive:
        answers = ask(input, torch, cuda, preset, flavor)
        torch, cuda, preset = answers.torch, answers.cuda, answers.preset
        notebook, members = answers.notebook, answers.members
    table = compat.load_table()
    try:
        release = compat.resolve_torch(table, torch)
        chosen = compat.resolve_cuda(table, release, cuda, flavor=flavor)
    except FieldError as exc:
        raise EnvkitError(exc.problem, exc.fix) from None
    text = (
        make_environment()
        .get_template("envkit.yaml.j2")
        .render(
            name=project,
            flavor=flavor,
            torch=release.version,
            cuda=chosen.version,
            preset=preset or "official",
            found=found,
            notebook=notebook,
            members=members,
            schema_file=SCHEMA_FILE,
        )
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    (path.parent / SCHEMA_FILE).write_text(schema_text(), encoding="utf-8")
    sys.stdout.write("".join(line + "\n" for line in _found_lines(found)))
    return path


def _found_lines(found: Survey) -> list[str]:
    used = [*found.requirements, found.apt_file, found.conda_file]
    used += ["pyproject.toml"] if found.pyproject else []
    used += ["uv.lock"] if found.uv_lock else []
    lines = [f"uses {name} (found here)" for name in used if name]
    lines += [f"skipped {why}" for why in found.skipped_keys]
    if found.key_file or found.agent_key:
        lines.append(f"SSH key: {found.key_file or 'the first usable key of ssh-agent'}")
    else:
        lines.append(
            "no usable public SSH key here: `ssh-keygen -t ed25519`, then list it under "
            "ssh.authorized_key_files (render and build need none; `envkit up` does)"
        )
    return lines


def run(request: InitRequest) -> int:
    """`envkit init`: write the starter and say what comes next."""
    written = write_starter(request)
    sys.stdout.write(
        f"wrote {written} and {written.parent / 'envkit.schema.json'} (for editors); "
        "next: edit it, then `envkit render`\n"
    )
    return 0
