"""What `envkit init` finds around it: the project's environment files, as candidates in the
order of precedence one of them is chosen by (a lock > pyproject.toml > a conda environment >
requirements.txt, as repo2docker picks one; apt.txt always; a file the project's own recipe
installs first), each with the torch it asks for; and the public keys the user actually has,
so the config names only keys that exist (`init` then `render` never fails on a fresh
machine). A setup.py is read from its syntax tree, never run."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from packaging.utils import canonicalize_name

from envkit.commands.init.base_image import on_base, recipe_base
from envkit.commands.init.conda_wish import from_conda, from_conda_lock
from envkit.commands.init.discovery import (
    DEV,
    RECIPE_HINT,
    Installed,
    aside,
    head,
    installed_by_recipes,
    own_name_order,
    unused_files,
    usable_kind,
    walk,
)
from envkit.commands.init.member_key import member_key
from envkit.commands.init.recipe_lines import (
    NAMED_BY,
    NOT_LINKED,
    RecipePip,
    carried_page,
    pixi_tasks,
    readme_pip,
    recipe_extras,
    recipe_pip,
)
from envkit.commands.init.setup_py import read_setup_py
from envkit.commands.init.torch_wish import (
    TorchWish,
    admitted_python,
    declared_extras,
    from_lines,
    from_pyproject,
    from_requirements,
    from_uv_lock,
    on_lock,
)
from envkit.config.rules import TORCH_NAMES, requirement_name
from envkit.errors import ConfigError, FieldError
from envkit.files import TOMLDecodeError, read_regular, toml_loads
from envkit.plan.project.pipenv import pipenv_requirements, pipfile_facts
from envkit.plan.project.poetry import is_poetry_only
from envkit.plan.project.project_files import file_limit, limit_hint
from envkit.plan.project.project_requirements import declared_groups, is_workspace_root
from envkit.plan.project.pyproject import workspace_members
from envkit.plan.project.requirement_lines import logical_lines

# The usual names, in the order repo2docker and envd look for them.
REQUIREMENTS = ("requirements.txt", "binder/requirements.txt", "requirements/requirements.txt")
APT_FILES = ("apt.txt", "binder/apt.txt")
CONDA_FILES = (
    "environment.yml",
    "environment.yaml",
    "conda.yml",
    "conda.yaml",
    "binder/environment.yml",
)
# exact, so ahead of the files they were made from (conda-linux-64.lock: conda-lock's explicit
# render of its lock for the image's platform)
CONDA_LOCKS = ("pixi.lock", "conda-lock.yml", "conda-linux-64.lock")
KNOWN = ("pyproject.toml", "uv.lock", "setup.py", "envkit.yaml")  # read above, or envkit's own
PROJECT_LOCKS = ("uv.lock", "poetry.lock", "pdm.lock")  # beside pyproject.toml: the first
PRECEDENCE = (
    "uv.lock, poetry.lock, pdm.lock > pixi.lock, conda-lock.yml > Pipfile.lock > "
    "pyproject.toml > environment.yml > requirements.txt > Pipfile > setup.py > a recipe's "
    "`pip install`"
)


@dataclass(frozen=True)
class Candidate:
    """One environment file (or pyproject.toml with its uv.lock) init could build from."""

    # a PROJECT_LOCKS name | pyproject | conda-lock | conda | requirements | setup.py | recipe
    kind: str
    files: tuple[str, ...]  # as envkit.yaml names them, relative to its folder
    wish: TorchWish
    pip: tuple[str, ...] = ()  # setup.py's install_requires or a recipe's, torch left to envkit
    cuda_extensions: bool = False  # setup.py builds CUDA extensions: nvcc (the devel image)
    because: str = ""  # the project's own line that installs it (the recipe's, ahead of others)
    pip_from: str = ""  # where pip was found, for envkit.yaml's comment
    hint: str = ""  # a file under its own name, taken last: why it was not, and how to use it
    editable: bool = False  # the project's recipe installs it editable: python.install editable

    @property
    def shown(self) -> str:
        return " and ".join(self.files)


@dataclass(frozen=True)
class Survey:
    candidates: tuple[Candidate, ...] = ()  # in order of precedence
    unusable: tuple[str, ...] = ()  # files found that no candidate can use, with why
    apt_file: str | None = None
    key_file: str | None = None  # as written in envkit.yaml: ~/.ssh/NAME.pub
    agent_key: str | None = None  # a key line from ssh-agent, when no file has one
    skipped_keys: tuple[str, ...] = ()  # files found but not usable, with why
    cuda_source: str | None = None  # a .cu file: compiled by nvcc at install or at run time
    devel_base: str | None = None  # the project's own recipe builds on a devel image (nvcc)


def _toml(path: Path, folder: Path, unusable: list[str]) -> dict[str, Any] | None:
    """A TOML file init found, read once; None where it is absent, or said in UNUSABLE where
    it cannot be read (too large, with the setting that moves the bound; not UTF-8; not TOML)."""
    if not path.is_file():
        return None
    name = path.relative_to(folder).as_posix()
    try:
        return toml_loads(read_regular(path, file_limit(), name, size_hint=limit_hint()).decode())
    except FieldError as exc:
        unusable.append(f"{name}: {exc.problem} ({exc.fix})")
    except UnicodeDecodeError:
        unusable.append(f"{name}: not UTF-8 text")
    except TOMLDecodeError as exc:
        unusable.append(f"{name}: not valid TOML ({exc})")
    return None


def _installed(folder: Path, installs: list[Installed], unusable: list[str]) -> list[Candidate]:
    """The files the project's own Dockerfile, dev container or Makefile installs: the project
    says which of its alternatives it uses, so these come first; with them, the packages the
    same recipe installs by name (FinRL's `RUN pip install jupyterlab` after its `-r`)."""
    found: list[Candidate] = []
    main: dict[str, list[Installed]] = {}  # by recipe: its main requirements files, together
    for i in installs:
        if (wish := _wish_of(i.kind, folder / i.file, folder)) is None:
            continue
        recipe = i.where.rsplit(":", 1)[0]
        together = i.kind == "requirements" and not aside(i.file) and not DEV.search(i.file)
        # a dev or test file that the main ones' own command installs is theirs too
        together |= recipe in main and i.command == main[recipe][0].command
        if together and recipe in main:  # gpt-neox's Dockerfile installs three in a row
            first = next(c for c in found if c.files[0] == main[recipe][0].file)
            main[recipe].append(i)
            read = (*first.wish.read, *wish.read)
            wish = replace(first.wish if first.wish.specifier else wish, read=read)
            because = "the project installs them: " + ", ".join(m.where for m in main[recipe])
            taken = replace(first, files=(*first.files, i.file), wish=wish, because=because)
            found[found.index(first)] = taken
            continue
        extra = recipe_pip(folder, [folder / recipe])
        pip, pip_from = (extra.pip, _named_by(extra)) if extra else ((), "")
        unusable += extra.untaken if extra else ()
        because = f"the project installs it: {i.where}"
        found.append(Candidate(i.kind, (i.file,), wish, pip, because=because, pip_from=pip_from))
        if together:
            main[recipe] = [i]
    return found


def _includer_first(found: list[Candidate], installs: list[Installed]) -> list[Candidate]:
    """A file the recipe installs that another file includes (mmpose's Dockerfile installs
    requirements/build.txt before `pip install -e .`; requirements.txt includes it with
    runtime.txt and the rest): the including file, a superset, in its place."""
    installed_at = {i.file: i.where for i in installs}
    for installed in [c for c in found if c.files[0] in installed_at]:
        file = installed.files[0]
        wider = next((c for c in found if file in c.wish.read and file not in c.files), None)
        if wider is not None:
            because = f"it includes {file}, which {installed_at[file]} installs"
            taken = replace(wider, because=because, pip=installed.pip, pip_from=installed.pip_from)
            found[found.index(installed)] = taken
    return found


def _named_by(listed: RecipePip) -> str:
    # an https page is carried on its packages (find_links), a local folder is not
    pages = (line for line in listed.lines if line.startswith(("-f ", "--find-links ")))
    linked = not all(map(carried_page, pages))
    return NAMED_BY.format(listed.where) + (NOT_LINKED if linked and listed.pip else "")


def _wish_of(kind: str, path: Path, folder: Path) -> TorchWish | None:
    """The torch a file of KIND asks for; None for a conda lock envkit cannot install."""
    if kind == "conda-lock":
        wish = from_conda_lock(path, folder)
        return wish if isinstance(wish, TorchWish) else None
    return from_conda(path, folder) if kind == "conda" else from_requirements(path, folder)


NOT_INSTALLED = "pyproject.toml's {} ({}): name those you want installed in python.{}"


def _few(names: list[str], most: int = 8) -> str:
    return ", ".join(names[:most]) + (f", … ({len(names)} in all)" if len(names) > most else "")


def _project_candidates(
    pyproject: dict[str, Any],
    lock: dict[str, Any] | None,
    lock_name: str,
    unusable: list[str],
    extras: tuple[tuple[str, ...], str, bool],
) -> list[Candidate]:
    """pyproject.toml (with its uv.lock, poetry.lock or pdm.lock) where it describes its
    dependencies: in [project], Poetry's table or a uv workspace's lock (dynamic dependencies
    would fail the first render); with the EXTRAS the project's recipe installs it with."""
    project = pyproject.get("project")
    readable = is_poetry_only(pyproject) or (lock is not None and is_workspace_root(pyproject))
    if not isinstance(project, dict) and not readable:
        unusable.append("pyproject.toml: neither a [project] table (PEP 621) nor Poetry's")
        return []
    if groups := declared_groups(pyproject):
        unusable.append(NOT_INSTALLED.format("dependency groups", _few(groups), "groups"))
    declared = {canonicalize_name(e): str(e) for e in declared_extras(pyproject)}
    named = tuple(declared.get(canonicalize_name(e), e) for e in extras[0])  # PEP 685
    locked_wish = from_uv_lock(lock or {}, lock_name)
    chosen = tuple(dict.fromkeys((*locked_wish.extras, *named)))  # torch's, and the recipe's
    locked_wish = replace(locked_wish, python=admitted_python(pyproject), extras=chosen)
    because = f"{extras[1]} installs it with [{','.join(extras[0])}]" if extras[0] else ""
    locked = [Candidate(lock_name, ("pyproject.toml", lock_name), locked_wish, because=because)]
    locked = locked if lock else []
    if isinstance(project, dict) and "dependencies" in (project.get("dynamic") or ()):
        if lock_name != "uv.lock" or not locked:  # only uv's lock holds what the build decided
            unusable.append("pyproject.toml: its dependencies are dynamic (its build decides)")
            return []
        return locked
    found = locked
    if isinstance(project, dict) or is_poetry_only(pyproject):  # not a virtual workspace root
        wish = from_pyproject(pyproject, "pyproject.toml", named)
        if unchosen := sorted(set(declared.values()) - {*named, *wish.extras, *chosen}):
            unusable.append(NOT_INSTALLED.format("extras", _few(unchosen), "extras"))
        because = f"{extras[1]} installs it" if extras[1] else ""
        because += f" with [{','.join(extras[0])}]" if extras[0] else ""
        because += " editable" if extras[2] else ""
        # Stability's generative-models: the package's metadata, its environment elsewhere
        bare = isinstance(project, dict) and not project.get("dependencies") and not locked
        hint = "its [project] declares no dependencies (the package alone): `python.project: .`"
        hint = hint + " installs it too" if bare else ""
        found.append(
            Candidate(
                "pyproject",
                ("pyproject.toml",),
                wish,
                hint=hint,
                because=because,
                editable=extras[2],
            )
        )
    return found


def _with_recipe_pip(
    project: list[Candidate], folder: Path, where: str, package: str
) -> list[Candidate]:
    """The packages the recipe that installs the project (WHERE) installs beside it by name
    (LLaVA's flash-attn), carried with the pyproject candidate."""
    listed = recipe_pip(folder, [folder / where.rsplit(":", 1)[0]], package) if where else None
    if listed is None or not listed.pip:
        return project
    pip, pip_from = listed.pip, _named_by(listed)
    return [replace(c, pip=pip, pip_from=pip_from) if c.kind == "pyproject" else c for c in project]


def _own_name(pyproject: dict[str, Any]) -> str:
    """The package's name, from [project] or Poetry's table ("" where neither names it)."""
    tool = pyproject.get("tool")
    for table in (pyproject.get("project"), tool.get("poetry") if isinstance(tool, dict) else None):
        if isinstance(table, dict) and table.get("name"):
            return str(table["name"])
    return ""


def _candidates(folder: Path, paths: list[Path]) -> tuple[list[Candidate], list[str]]:
    installs = installed_by_recipes(folder, paths)
    unusable: list[str] = []
    found: list[Candidate] = _installed(folder, installs, unusable)
    pyproject = _toml(folder / "pyproject.toml", folder, unusable)
    lock_name = next((n for n in PROJECT_LOCKS if (folder / n).is_file()), "uv.lock")
    lock = _toml(folder / lock_name, folder, unusable)
    package = _own_name(pyproject or {})
    project, extras = [], recipe_extras(folder, paths, package)
    if pyproject:
        project = _project_candidates(pyproject, lock, lock_name, unusable, extras)
    project = _with_recipe_pip(project, folder, extras[1], package)
    # a lock of the whole environment before a project's unlocked dependencies
    found += [c for c in project if c.kind == lock_name] + _conda_lock(folder, unusable)
    found += _pipenv(folder, "Pipfile.lock", unusable)
    found += [c for c in project if c.kind != lock_name and not c.hint]
    for name in CONDA_FILES:  # every one found: the first is taken, the others are said
        if (folder / name).is_file():
            found.append(Candidate("conda", (name,), from_conda(folder / name, folder)))
    for name in REQUIREMENTS:
        if (folder / name).is_file() and _names_a_package(folder / name):
            found.append(
                Candidate("requirements", (name,), from_requirements(folder / name, folder))
            )
        elif (folder / name).is_file():
            unusable.append(f"{name}: it names no package (comments and blank lines only)")
    found += _pipenv(folder, "Pipfile", unusable)
    has_setup = (folder / "setup.py").is_file()
    setup_name = _setup_py(folder, paths, found, unusable, package) if has_setup else ""
    # last, the packages a recipe names on its pip line (one that installs a file: with it)
    recipes = [p for p in paths if p not in {folder / i.where.rsplit(":", 1)[0] for i in installs}]
    listed = recipe_pip(folder, recipes, package)
    unusable += listed.untaken if listed else ()
    carried = {c.pip_from for c in project if c.kind == "pyproject" and c.pip}
    if listed and listed.lines and _named_by(listed) not in carried:  # not said twice
        wish, named = from_lines([], listed.where, listed.lines), _named_by(listed)
        recipe = Candidate("recipe", (listed.file,), wish, listed.pip, because=named)
        # where another file is taken, what its pip lines install is said, not lost in silence
        names = f"; its `pip install` ({listed.where}) names {', '.join(listed.pip)}"
        found.append(replace(recipe, pip_from=named, hint=RECIPE_HINT + names))
    found = _includer_first(found, installs)
    found = [c for i, c in enumerate(found) if c.files not in {f.files for f in found[:i]}]
    taken = {*REQUIREMENTS, *CONDA_FILES, *CONDA_LOCKS, *APT_FILES, *KNOWN}
    taken |= {"setup.cfg"} if any(c.kind == "setup.py" for c in found) else set()
    taken |= {name for c in found for name in (*c.files, *c.wish.read)}
    # it said which file, or the project's extras: it was read
    taken |= {w.rsplit(":", 1)[0] for w in (*(i.where for i in installs), extras[1]) if w}
    if lock and lock_name == "uv.lock":  # a uv workspace's members' files are its own
        taken |= {f"{member}/pyproject.toml" for member in workspace_members(lock).values()}
    taken |= {why.split(":", 1)[0] for why in unusable}
    others = unused_files(folder, taken, paths)
    own = [(name, why) for name, why in others if usable_kind(why) and not aside(name)]
    unusable += [f"{name}: {why}" for name, why in others if (name, why) not in own]
    unusable += pixi_tasks(folder)  # beside pixi.toml's own line: its tasks are not its tables
    found = _own_names_before_bare(found, own, folder)
    found += [c for c in project if c.hint]
    unusable += _naming_itself(folder, found, package or setup_name)
    return found or _readme(folder), unusable


def _naming_itself(folder: Path, found: list[Candidate], package: str) -> list[str]:
    """Each line of a requirements candidate that names the project itself (peft's
    requirements.txt: `peft`): pip would install PyPI's release over the checkout."""
    if not package:
        return []
    files = dict.fromkeys(f for c in found if c.kind == "requirements" for f in c.files)
    return [
        f"{file}:{first}: `{line}` is the project itself: pip installs PyPI's release of it, "
        "not the checkout; `-e .` in its place installs the workspace's at first start"
        for file in files
        for first, _, line in logical_lines(head(folder / file))
        if requirement_name(line) == canonicalize_name(package)
    ]


def _own_names_before_bare(
    found: list[Candidate], own: list[tuple[str, str]], folder: Path
) -> list[Candidate]:
    """A setup.py that names no package says less than a conda or requirements file under a
    name of the project's own (environment-gpu.yml), and a recipe's bare `pip install`
    (lmdeploy's `pip install cmake ninja`) less still: those files first."""
    bare = [c for c in found if c.kind == "setup.py" and not c.pip and not c.wish.specifier]
    bare += [c for c in found if c.kind == "recipe"]
    return [c for c in found if c not in bare] + _under_own_names(own, folder) + bare


def _readme(folder: Path) -> list[Candidate]:
    """A project with no environment file: its README's install line (nanoGPT's `pip install
    torch numpy transformers datasets tiktoken wandb tqdm`), as a recipe's pip line."""
    if (found := readme_pip(folder, more=True)) is None:
        return []
    where, lines = found
    pip = tuple(r for r in lines if r[0] != "-" and requirement_name(r) not in TORCH_NAMES)
    named = NAMED_BY.format(where)
    wish = from_lines([], where, lines)
    return [Candidate("recipe", (where.split(":")[0],), wish, pip, because=named, pip_from=named)]


def _under_own_names(files: list[tuple[str, str]], folder: Path) -> list[Candidate]:
    """Files under names of the project's own, after every usual name, in own_name_order; a
    project whose only files are these still gets one."""
    found = [
        Candidate(kind, (name,), wish, hint=why)
        for name, why in sorted(files, key=own_name_order)
        if (wish := _wish_of(kind := str(usable_kind(why)), folder / name, folder)) is not None
    ]
    # a file another one includes (`-r common.txt` in runtime_cuda.txt) after its includer
    included = {read for c in found for read in c.wish.read if read not in c.files}
    return sorted(found, key=lambda c: c.files[0] in included)


def _pipenv(folder: Path, name: str, unusable: list[str]) -> list[Candidate]:
    """A Pipfile.lock (with the locks) or Pipfile (with requirements); an empty one is said."""
    if not (folder / name).is_file():
        return []
    text = (folder / name).read_text(errors="replace")
    try:
        lines = pipenv_requirements(name, text)
    except ConfigError:
        lines = "?"  # a candidate still: render says why, at its line
    python, dev = pipfile_facts(name, text)
    if not any(line and not line.startswith("#") for line in lines.splitlines()):
        unusable.append(
            f"{name}: it names no package"
            + (f" but {dev} dev ones (`pipenv install -d`): move them to [packages]" if dev else "")
        )
        return []
    wish = from_requirements(folder / name, folder)
    return [Candidate("requirements", (name,), replace(wish, python=python or wish.python))]


def _names_a_package(path: Path) -> bool:
    """A line that is neither blank nor a comment (a requirements file of comments only is
    an empty environment: the next candidate is the project's)."""
    try:
        with path.open(encoding="utf-8", errors="replace") as opened:
            head = opened.read(1 << 20)  # a package is named long before a MiB of comments
    except OSError:
        return True  # unreadable: render says why, at the file
    return any(line.strip() and not line.lstrip().startswith("#") for line in head.splitlines())


OWN = "the-project"  # the name a setup.py without a literal name= is read under (`-e .[all]`)


def _setup_py(
    folder: Path, paths: list[Path], found: list[Candidate], unusable: list[str], package: str
) -> str:
    """A setup.py's literal install_requires as the lowest candidate, with the extras the
    project's own recipe installs it with (`pip install -e .[all]`), or why it is not read;
    the name it gives the package."""
    setup = read_setup_py(folder / "setup.py")
    if setup.requires is None:
        unusable.append(
            f"setup.py: {setup.why}; list its dependencies in a requirements file with `-e .` "
            "(the project installed from the workspace at first start), or describe them in "
            "pyproject.toml's [project]"
        )
        return setup.name
    declared = {canonicalize_name(e): wanted for e, wanted in (setup.extras or {}).items()}
    # a project whose pyproject.toml names it: its extras are the pyproject's, said there
    asked, where, _ = (
        recipe_extras(folder, paths, setup.name or OWN) if not package else ((), "", False)
    )
    chosen = [e for e in map(canonicalize_name, asked) if e in declared]
    if unread := [e for e in asked if canonicalize_name(e) not in declared]:
        unusable.append(
            f"setup.py: {where} installs it with extras {', '.join(unread)}, which its "
            "extras_require does not list as written (decided when it runs): list the "
            "packages they add in packages.pip"
        )
    requires = [*setup.requires, *(r for e in chosen for r in declared[e])]
    pip = tuple(r for r in dict.fromkeys(requires) if requirement_name(r) not in TORCH_NAMES)
    said = "setup.py's install_requires"
    said += f" and extras {', '.join(chosen)} ({where} installs it with them)" if chosen else ""
    if unchosen := sorted(set(declared) - set(chosen)):
        unusable.append(
            f"setup.py: its extras {', '.join(unchosen)} are not installed (no recipe of the "
            "project installs it with them): list the packages you want of them in packages.pip"
        )
    wish = from_lines([], "setup.py", requires)
    found.append(
        Candidate("setup.py", ("setup.py",), wish, pip, setup.cuda_extensions, pip_from=said)
    )
    return setup.name


def _conda_lock(folder: Path, unusable: list[str]) -> list[Candidate]:
    """The first conda lock with packages for the image's platform; the others said why not."""
    for name in CONDA_LOCKS:
        if not (folder / name).is_file():
            continue
        locked = from_conda_lock(folder / name, folder)
        if isinstance(locked, TorchWish):
            return [Candidate("conda-lock", (name,), locked)]
        unusable.append(locked or f"{name}: not a conda lock (conda-lock's or pixi's) envkit reads")
    return []


def survey(folder: Path, home: Path) -> Survey:
    key_file, agent_key, skipped = member_key(home)
    paths = walk(folder)  # the project's files, walked once
    candidates, unusable = _candidates(folder, paths)
    locks = (c for c in candidates if c.kind in (*PROJECT_LOCKS, "conda-lock"))
    if lock := next((c for c in locks if (c.wish.specifier or "").startswith("==")), None):
        candidates = [
            replace(c, wish=on_lock(c.wish, c.shown, lock.wish, lock.files[-1])) for c in candidates
        ]
    if base := recipe_base(folder, paths):
        candidates = [replace(c, wish=on_base(c.wish, c.shown, base)) for c in candidates]
    # CUDA sources need nvcc wherever they are compiled: a setup.py's extension, or
    # torch.utils.cpp_extension.load at run time (StyleGAN3's ops) in the container
    cuda = next((p.relative_to(folder).as_posix() for p in paths if p.suffix == ".cu"), None)
    return Survey(
        candidates=tuple(candidates),
        unusable=tuple(unusable),
        apt_file=next((n for n in APT_FILES if (folder / n).is_file()), None),
        key_file=key_file,
        agent_key=agent_key,
        skipped_keys=skipped,
        cuda_source=cuda,
        devel_base=base.said if base and base.devel else None,
    )
