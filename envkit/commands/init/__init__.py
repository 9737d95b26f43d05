"""`envkit init`: a commented starter envkit.yaml that validates as written.

Its parts, which no other command uses, are beside it: survey.py (what the folder holds, a
setup.py read without running it), torch_wish.py (the torch those files ask for) and
questions.py (what is asked at a terminal)."""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, replace
from pathlib import Path

import yaml
from pydantic import TypeAdapter, ValidationError

from envkit.catalog import compat
from envkit.catalog.mirrors import preset_names
from envkit.commands.init.questions import ask
from envkit.commands.init.recipe_lines import NO_ISOLATION, STARTER_APT
from envkit.commands.init.survey import PRECEDENCE, PROJECT_LOCKS, Candidate, Survey, survey
from envkit.commands.init.torch_wish import NEAREST, NO_TORCH, release_for
from envkit.commands.schema import SCHEMA_FILE, schema_text
from envkit.config.choices import FLAVORS
from envkit.config.fields import ProjectName
from envkit.errors import ConfigError, EnvkitError, FieldError
from envkit.render.files import make_environment

DEFAULT_PYTHON = "3.11"


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


def _check_choice(option: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise EnvkitError(
            f"--{option}: {value!r} is not one of {', '.join(choices)}",
            f"pass one of: {', '.join(choices)}",
        )


def _project_name(name: str | None, path: Path) -> str:
    folder = re.sub(r"[^a-z0-9_-]+", "-", path.resolve().parent.name.lower()).strip("-_")
    project = name or folder[:63] or "my-env"  # the folder's name, as a project name
    try:
        TypeAdapter(ProjectName).validate_python(project)  # the same rule envkit.yaml's name obeys
    except ValidationError:
        raise EnvkitError(
            f"--name: {project!r} is not a valid project name",
            "use lowercase letters, digits, '-' and '_'",
        ) from None
    return project


@dataclass(frozen=True)
class _Proposal:
    torch: str
    cuda: str | None
    said: str  # why this torch: the file that asked for it


def _proposal(request: InitRequest, chosen: Candidate | None) -> _Proposal | str:
    """torch and cuda to write: the options', else what the chosen file asks; the reason
    (a str) where the file asks for a torch envkit cannot give."""
    table = compat.load_table()
    torch, cuda, said = request.torch, request.cuda, ""
    wish = chosen.wish if chosen is not None else None
    if (
        torch is None
        and wish is not None
        and (wish.specifier or wish.none or wish.cuda or wish.companions)
    ):
        wished, wished_cuda, note = release_for(wish)
        if wished is None:
            return note
        torch, cuda, said = wished, cuda or wished_cuda, wish.said
        if note:
            said = note if note.endswith(NEAREST) else f"{said}; {note}"
    elif wish is not None and cuda is None:
        cuda = wish.cuda
    if torch == "none":  # a CUDA the project's TensorFlow was built for, or the one asked
        return _Proposal("none", cuda, said)
    try:
        release = compat.resolve_torch(table, torch)
        chosen_cuda = (
            "cpu"
            if cuda == "cpu"
            else compat.resolve_cuda(table, release, cuda, flavor=request.flavor).version
        )
    except FieldError as exc:
        if request.torch or request.cuda:
            raise EnvkitError(exc.problem, exc.fix) from None
        return exc.problem
    return _Proposal(release.version, chosen_cuda, said)


@dataclass(frozen=True)
class _Decided:
    """What the starter template writes where it had a choice, decided here: the template only
    tests each one's presence (tests/unit/test_house_rules.py)."""

    custom_image: bool  # flavor custom: an `image:` line to edit
    devel: str | None  # why the devel variant (nvcc): CUDA extensions or sources found
    torch_none: bool
    torch_note: str  # the comment after `torch:`
    python_version: str | None  # None: a pytorch image's own Python (CUDA builds)
    python_project: str | None  # `project: .`'s comment: pyproject.toml (and uv.lock)
    python_extras: tuple[str, ...]  # its torch build's (`.[cu121]`), or its recipe's extras
    python_editable: bool  # its recipe installs it editable (`pip install -e .`)
    python_line: str | None  # `python: "X"` where there is no project to name
    pip_listed: tuple[str, ...]  # setup.py's install_requires or a recipe's: packages.pip
    pip_source: str | None  # where pip_listed was found, for its comment
    requirements_files: str | None  # packages.requirements' list, as written
    conda_file: str | None
    conda_note: str  # the comment after conda.file
    conda_environment: str | None  # a pixi.lock's environment other than its default
    agent_key: str | None  # ssh-agent's key, where no key file was found
    no_key: bool
    cpu_only: bool  # cuda: cpu: no GPU asked of the engine, none required by verify


def _devel(use: Candidate | None, found: Survey) -> str | None:
    if any(c.cuda_extensions for c in (use, *found.candidates) if c is not None):
        return "setup.py builds CUDA extensions (nvcc)"  # whichever file is taken
    built = [p.partition(" ")[0] for p in use.pip if NO_ISOLATION in p] if use else []
    if built:  # flash-attn and its kind compile against torch where no wheel fits: nvcc
        return f"{', '.join(built)} builds against torch (--no-build-isolation)"
    if found.cuda_source is not None:
        return f"{found.cuda_source}: CUDA sources, compiled by nvcc"
    return found.devel_base


def _pip_entry(line: str) -> str:
    """A packages.pip entry as envkit.yaml writes it: the requirement as a JSON string, with
    the options the project's own line installs it with as a mapping (`{name:
    "flash-attn==2.7.4.post1", no_build_isolation: true}`, `find_links: URL` for -f's page)."""
    requirement, *options = re.split(r"\s+(?=--)", line)
    if not options:
        return json.dumps(line)
    settings = [f"name: {json.dumps(requirement)}"]
    for option in options:
        key, _, value = option.removeprefix("--").partition(" ")
        settings.append(f"{key.replace('-', '_')}: {json.dumps(value) if value else 'true'}")
    return "{" + ", ".join(settings) + "}"


def _conda_note(use: Candidate | None) -> str:
    if use is None or use.kind != "conda-lock":
        return "its channels, dependencies and pip: entries"
    others = ", ".join(use.wish.environments)
    return "its linux-64 packages installed exactly" + (
        f" (environment {use.wish.environment}; conda.environment: one of {others})"
        if others
        else ""
    )


def _environment(use: Candidate | None) -> str | None:
    chosen = use.wish.environment if use is not None and use.kind == "conda-lock" else "default"
    return None if chosen == "default" else chosen


def _decided(
    flavor: str, proposal: _Proposal, python: str, use: Candidate | None, found: Survey
) -> _Decided:
    kind = use.kind if use else None
    version = python if flavor != "pytorch" or proposal.cuda == "cpu" else None
    project = None
    if use is not None and kind in (*PROJECT_LOCKS, "pyproject"):
        project = use.shown + (" (installed exactly)" if kind in PROJECT_LOCKS else "")
    if proposal.torch == "none":
        note = proposal.said or "no torch"
    else:
        note = proposal.said or "see `envkit compat` for releases and their CUDA builds"
    conda = use.files[0] if use is not None and kind in ("conda", "conda-lock") else None
    return _Decided(
        custom_image=flavor == "custom",
        devel=_devel(use, found),
        torch_none=proposal.torch == "none",
        torch_note=note,
        python_version=version,
        python_project=project,
        python_extras=use.wish.extras if use is not None and project else (),
        python_editable=use is not None and project is not None and use.editable,
        python_line=version if project is None else None,
        pip_listed=tuple(map(_pip_entry, use.pip if use is not None else ())),
        pip_source=use.pip_from if use is not None else None,
        requirements_files=", ".join(use.files)
        if use is not None and kind == "requirements"
        else None,
        conda_file=conda,
        conda_note=_conda_note(use),
        conda_environment=_environment(use),
        agent_key=None if found.key_file else found.agent_key,
        no_key=not (found.key_file or found.agent_key),
        cpu_only=proposal.cuda == "cpu",
    )


def write_starter(request: InitRequest) -> Path:
    path, preset = request.path, request.preset
    if preset is not None:
        _check_choice("preset", preset, preset_names())
    _check_choice("flavor", request.flavor, FLAVORS)
    if path.exists() and not request.force:
        raise EnvkitError(
            f"{path} already exists", "pass --force to overwrite it, or -c/--config elsewhere"
        )
    project = _project_name(request.name, path)  # before any question: a bad --name stops here
    found = survey(path.resolve().parent, Path.home())
    notebook, members = False, tuple[tuple[str, str], ...]()
    if request.interactive:
        answers = ask(input, request.torch, request.cuda, preset, request.flavor)
        request = replace(request, torch=answers.torch, cuda=answers.cuda)
        preset, notebook, members = answers.preset, answers.notebook, answers.members
    left: list[str] = []  # candidates tried and left out, with why
    for chosen in (*found.candidates, None):
        proposal = _proposal(request, chosen)
        if isinstance(proposal, str):
            left.append(_one_line(f"{chosen.shown if chosen else 'the default'}: {proposal}"))
            continue
        text = _starter(request, project, found, chosen, proposal, left, preset, notebook, members)
        problem = _refused(text, path)
        if problem is None or chosen is None:
            break
        left.append(_one_line(f"{chosen.shown}: {problem}"))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    (path.parent / SCHEMA_FILE).write_text(schema_text(), encoding="utf-8")
    sys.stdout.write("".join(line + "\n" for line in _found_lines(found, chosen, left)))
    return path


def _one_line(reason: str) -> str:
    """REASON as one line: it is written into envkit.yaml as a comment, where a second line
    would be YAML (a report of several problems is one per line)."""
    return "; ".join(line.strip() for line in reason.splitlines() if line.strip())


def _starter(
    request: InitRequest,
    project: str,
    found: Survey,
    chosen: Candidate | None,
    proposal: _Proposal,
    left: list[str],
    preset: str | None,
    notebook: bool,
    members: tuple[tuple[str, str], ...],
) -> str:
    flavor = _flavor(request.flavor, proposal, chosen)
    alternatives = _alternatives(found, chosen, left)
    python = _python(proposal, chosen.wish.python if chosen else None)
    return (
        make_environment()
        .get_template("envkit.yaml.j2")
        .render(
            # a folder named off, yes or 2024 is a string to envkit, a bool or int to YAML
            name=project if yaml.safe_load(project) == project else f'"{project}"',
            flavor=flavor,
            torch=proposal.torch,
            cuda=proposal.cuda,
            preset=preset or "official",
            key_file=found.key_file,
            apt_file=found.apt_file,
            alternatives=alternatives,
            notebook=notebook,
            members=members,
            schema_file=SCHEMA_FILE,
            starter_apt=STARTER_APT,
            **vars(_decided(flavor, proposal, python, chosen, found)),
        )
    )


def _flavor(asked: str, proposal: _Proposal, chosen: Candidate | None) -> str:
    """The pytorch flavor where it fits, else cuda: a pytorch/pytorch image carries torch and
    its own conda and Python."""
    if asked != "pytorch" or (proposal.torch != "none" and chosen is None):
        return asked
    python = chosen.wish.python if chosen is not None else None
    misfits = (
        proposal.torch == "none",
        chosen is not None and chosen.kind == "conda-lock",  # a locked environment of its own
        # requires-python (or a compiled file's Python) without envkit's default: a Python
        # envkit installs
        chosen is not None
        and chosen.kind in (*PROJECT_LOCKS, "pyproject", "requirements", "conda")
        and python not in (None, DEFAULT_PYTHON),
    )
    return "cuda" if any(misfits) else asked


def _python(proposal: _Proposal, wished: str | None) -> str:
    """The file's Python, else 3.11 where the proposed torch has its wheels, else the newest
    Python it has: a file pinning an older torch (pytorch=1.9.1 under `python >= 3.8`) is kept
    with a Python that torch can be installed into, not left out over envkit's default."""
    if wished or proposal.torch == "none":
        return wished or DEFAULT_PYTHON
    pythons = compat.resolve_torch(compat.load_table(), proposal.torch).python
    return DEFAULT_PYTHON if DEFAULT_PYTHON in pythons else max(pythons, key=compat.version_key)


def _refused(text: str, path: Path) -> str | None:
    """The first problem `envkit render` would find in TEXT, or None: init proposes a file
    only where the config it writes renders (the next command must not fail)."""
    from envkit.config.load import load_text
    from envkit.plan import make_plan

    try:
        make_plan(load_text(text, path=path.resolve()))
    except ConfigError as exc:
        issue = exc.issues[0]
        # a project file's line is on disk; envkit.yaml's is in a config never written: its
        # field is said instead
        place = f"{issue.file}:{issue.line}" if issue.file and issue.line else issue.path
        return f"{place}: {issue.problem} (fix: {issue.fix})"[:400]
    except EnvkitError as exc:
        return f"{exc.message} (fix: {exc.fix})"[:400] if exc.fix else exc.message[:400]
    return None


def _not_used(found: Survey, chosen: Candidate | None, left: list[str]) -> list[Candidate]:
    """The alternatives init did not take: neither the chosen one, nor one left out (named
    with its reason already), nor one whose files the chosen one uses (pyproject.toml is
    used by its uv.lock's candidate)."""
    used = {*chosen.files, *chosen.wish.read} if chosen else set()  # `-e .`'s setup.py too
    others = [
        c
        for c in found.candidates
        if c is not chosen
        and not set(c.files) <= used
        and not any(why.startswith(c.shown + ":") for why in left)
    ]  # pyproject.toml alone is said with its lock, not again
    return [c for c in others if not any(set(c.files) < set(o.files) for o in others)]


def _by_folder(unusable: tuple[str, ...], many: int = 4) -> list[str]:
    """Files not used for one reason, MANY or more under one top folder (LoRA's 34 files in
    examples/), said on one line with the first three named; the rest one by one."""
    groups: dict[tuple[str, str], list[str]] = {}
    for line in unusable:
        name, _, why = line.partition(": ")
        top = name.split("/", 1)[0] + "/" if "/" in name else name
        groups.setdefault((top, why), []).append(name)
    said = []
    for (top, why), names in groups.items():
        if len(names) >= many and top.endswith("/"):
            said.append(f"{top} ({len(names)} files: {', '.join(names[:3])}, ...): {why}")
        else:
            said += [f"{name}: {why}" for name in names]
    return said


def _alternatives(found: Survey, chosen: Candidate | None, left: list[str]) -> list[str]:
    """The alternatives not taken: those left out (with why), one line for those precedence
    decided between, one for each under a name of its own (with how to use it), then the
    files no candidate can use."""
    others = _not_used(found, chosen, left)
    said = [f"not used: {c.shown}: {c.hint}" for c in others if c.hint]
    # the project's own recipe said which file it uses, else precedence decided
    why = f"{chosen.shown}: {chosen.because}" if chosen and chosen.because else PRECEDENCE
    if plain := [c.shown for c in others if not c.hint]:
        said.insert(0, f"also here, not used ({why}): {', '.join(plain)}")
    unusable = [f"not used: {why}" for why in _by_folder(found.unusable)]
    # each written into envkit.yaml as one comment line, whatever a file's text held
    return [_one_line(line) for line in (*(f"left out {w}" for w in left), *said, *unusable)]


def _chosen_lines(chosen: Candidate) -> list[str]:
    usual = "no usable file under a usual name"
    how = chosen.because or (usual if chosen.hint else f"precedence {PRECEDENCE}")
    lines = [f"uses {chosen.shown} (found here; {how})"]
    if said := chosen.wish.said:
        lines.append(said if NO_TORCH.search(said) else f"torch from {said}")
    if chosen.pip:
        lines.append(f"packages.pip: {', '.join(chosen.pip)} ({chosen.pip_from})")
    if chosen.kind in (*PROJECT_LOCKS, "pyproject") and not chosen.editable:
        # said, not decided: a package whose build needs more than its checkout is the team's
        # call; its own recipe or install docs saying `pip install -e .` decide it (editable)
        lines.append(
            "the project's own package is not installed, only what it needs: "
            "python.install: editable installs the checkout at first start"
        )
    return lines


def _found_lines(found: Survey, chosen: Candidate | None, left: list[str]) -> list[str]:
    lines = []
    if chosen is not None:
        lines += _chosen_lines(chosen)
    else:
        lines.append(
            "found no environment file to use (requirements, pyproject.toml, a conda file or "
            "lock, setup.py): the image gets torch and no packages of the project's; list them "
            "under packages.pip"
        )
    if found.apt_file:
        lines.append(f"uses {found.apt_file} (found here)")
    if devel := _devel(chosen, found):
        lines.append(f"base variant devel, with nvcc: {devel}")
    lines += _alternatives(found, chosen, left)
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
