"""What the project's own recipes run, read as the commands they are: each `pip install` (its
packages, with the options envkit.yaml keeps on them), the extras the project is installed
with, and the `mim`, `conda` and `apt-get` installs that are said, not carried; from a
Dockerfile (its ARG and ENV values in), a script, a Makefile, a dev container's lifecycle
commands, or a README's fenced pip line."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass, replace
from itertools import dropwhile, pairwise
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement

from envkit.catalog.compat import COMPANIONS
from envkit.commands.init.discovery import (
    NOT_NVIDIA,
    RECIPE,
    SIDE_WORD,
    code_of,
    head,
    install_docs,
    recipes,
)
from envkit.config.rules import TORCH_NAMES as TORCHES
from envkit.config.rules import requirement_name
from envkit.files import TOMLDecodeError, toml_loads
from envkit.plan.project.lock_graph import line_of
from envkit.plan.project.project_requirements import line_of_key
from envkit.plan.project.requirement_lines import INDEX_OPTIONS

# pip (pip3, python -m pip, uv pip, a pip by its path) and OpenMMLab's mim, as a command's word
# (`@pip`, `-pip`: make's prefixes of a recipe line)
PIP = re.compile(r"[-@+]*(?:.*/)?pip(?:3(?:\.\d+)?|\$\{?\w+\}?)?")  # pip${PYTHON_VERSION} too
SUBSHELL = re.compile(r"\$\([^()]*\)")
MAKE_PIP = re.compile(r"\$[({][A-Za-z_]*PIP[A-Za-z_]*[)}]")  # a Makefile's $(PIP), $(PIPENV_PIP)
MIM = re.compile(r"(?:.*/)?mim")
VALUE_OPTION = re.compile(  # an option of `pip install`'s or `uv pip install`'s that takes the
    # next word as its value (their --help): that word is never a package to install
    r"-[rcetCbpP]|--(requirements?|constraints?|overrides?|build-constraints?|editable|target|"
    r"prefix|root|src|cache-dir|trusted-host|allow-insecure-host|platform|python-version|"
    r"python-platform|implementation|abi|config-settings?|config-settings-package|"
    r"global-option|install-option|only-binary|no-binary|upgrade-strategy|progress-bar|timeout|"
    r"retries|resume-retries|proxy|cert|client-cert|log|log-file|exists-action|use-feature|"
    r"use-deprecated|root-user-action|report|python|group|extra|index|default-index|"
    r"index-strategy|keyring-provider|resolution|prerelease|fork-strategy|exclude-newer|"
    r"exclude-newer-package|no-build-package|no-binary-package|only-binary-package|"
    r"no-build-isolation-package|reinstall-package|refresh-package|upgrade-package|link-mode|"
    r"torch-backend|config-file|directory|project|color)"
)
# What a recipe upgrades before its packages, or installs to make and manage environments (a
# Makefile's create_environment target, a helper script's re-lock): tools, not the environment
TOOLING = {
    *("pip", "setuptools", "wheel", "uv", "virtualenv", "virtualenvwrapper", "pipenv", "poetry"),
    *("pdm", "pip-tools", "setuptools-scm", "build", "twine", "conda-lock", "hatch"),
    *("cmake", "ninja", "auditwheel", "scikit-build", "scikit-build-core", "meson"),
}  # a build's tools (cmake, ninja): the devel base's, not the environment's
# pip's flag for a package that builds against what is installed (a CUDA extension importing
# torch): kept on the entry, which envkit.yaml writes as {name, no_build_isolation: true}
NO_ISOLATION = "--no-build-isolation"


NAMED_BY = "the packages that {}'s pip install names"  # the lines, as init says it
# mim (OpenMMLab) picks the wheel built for the image's torch and CUDA from its own pages
MIM_UNTAKEN = (
    "not carried: mim picks OpenMMLab's wheels built for the torch and CUDA; list them in "
    "packages.pip, and mmcv's -f page in a requirements file (or build its sources: devel)"
)
NOT_LINKED = "; its -f pages are not carried: list those packages in a requirements file with -f"
# a package by URL (git, a wheel's or an archive's): its name is the build's to tell
BY_URL = re.compile(r"(?:git\+)?(?:https?|ssh)://")
URL_UNTAKEN = "not carried: a package by URL: list it as `NAME @ URL` in packages.pip"
APT = re.compile(r"(?:.*/)?apt(?:-get)?")
APT_UNTAKEN = "not carried: list the system packages it needs in packages.apt"
# The system packages every starter envkit.yaml lists: a recipe's apt line of only these is carried.
STARTER_APT = ("git", "tmux")
CONDA = re.compile(r"(?:.*/)?(?:conda|mamba|micromamba)")
CONDA_UNTAKEN = "not carried: list its packages under conda.packages"
NVCC = re.compile(r"cuda-(?:compiler|nvcc|toolkit)|cudatoolkit-dev")  # nvcc: the devel image


@dataclass(frozen=True)
class RecipePip:
    file: str  # the recipe, as envkit.yaml names it
    numbers: tuple[int, ...]  # every line that names packages
    pip: tuple[str, ...]  # the packages, torch left to envkit
    lines: list[str]  # every requirement line with the indexes the lines name
    untaken: tuple[str, ...] = ()  # the recipe's mim lines, said with how to carry them

    @property
    def where(self) -> str:  # Dockerfile:2,3,5
        return f"{self.file}:{','.join(map(str, self.numbers))}"


def _commands(text: str) -> Iterator[tuple[int, str]]:
    """(the line it starts on, the command) for each line, continued lines joined; comments
    (inside a continued RUN too, as Docker drops them) left out."""
    held, start = "", 0
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("#"):
            continue
        held, start = held + " " + line.removesuffix("\\"), start or number
        if not line.endswith("\\"):
            yield start, held
            held, start = "", 0


# a Makefile's rule (`docs: setup`, `sphinx-theme:`), and those whose names say they build the
# docs, lint, release or clean up: their installs are that task's, not the environment's
RULE = re.compile(r"^([A-Za-z0-9_.-]+)\s*:(?!=)")
SIDE_RULE = re.compile(r"doc|sphinx|theme|lint|format|release|publish|deploy|clean", re.I)


def _built(text: str) -> Iterator[tuple[int, str]]:
    """An image recipe's commands with its ARG and ENV values in."""
    known: dict[str, str] = {}
    for number, line in _commands(text):
        if found := ARG.match(line.strip()):
            known[found.group(1)] = found.group(2).strip("\"'")
        yield number, substituted(line, known, keep=True)


def _made(text: str) -> Iterator[tuple[int, str]]:
    """A Makefile's commands, less those of its side rules (docs, lint, release, clean)."""
    side = False
    for number, command in _commands(text):
        if rule := RULE.match(command.strip()) if not command.startswith(" \t") else None:
            side = bool(SIDE_RULE.search(rule.group(1)))
        elif not side:
            yield number, command


# a dev container's commands (devcontainer.json's lifecycle scripts): a string is run by a shell,
# a list is one command's words, an object names commands run in parallel
LIFECYCLE = re.compile(r'"(initialize|onCreate|updateContent|postCreate|postStart)Command"')
JSONC = re.compile(r'("(?:\\.|[^"\\])*")|//[^\n]*|/\*.*?\*/', re.DOTALL)  # a string, or a comment


# an image recipe's build arguments and environment (`ARG CUDA=12.2.2`, `ENV PIP_VERSION=24`)
ARG = re.compile(r"^(?:ARG|ENV)\s+([A-Za-z_]\w*)=(\"[^\"]*\"|'[^']*'|\S+)", re.IGNORECASE)
VARIABLE = re.compile(r"\$\{(\w+)(?::?-([^}]*))?\}|\$(\w+)")  # ${A}, ${A:-default}, $A


def substituted(text: str, arguments: dict[str, str], keep: bool = False) -> str:
    """TEXT with each variable replaced by its value in ARGUMENTS, else its default, else ""
    (or, with KEEP, left as it is)."""

    def value(found: re.Match[str]) -> str:
        name = found.group(1) or found.group(3)
        default = found.group(2) if found.group(2) is not None else (found.group(0) if keep else "")
        return arguments.get(name) or default

    return VARIABLE.sub(value, text)


def recipe_commands(path: Path) -> Iterator[tuple[int, str]]:
    """(line, command) of each command a recipe runs: a Dockerfile's or a script's lines (an
    image recipe's with its ARG and ENV values in: `pip install "${INSTALL}"`), a dev
    container's lifecycle commands (JSON with comments, as VS Code reads it)."""
    text = head(path)
    if path.suffix != ".json":
        read = (
            _built if RECIPE.search(path.name) else _made if path.name == "Makefile" else _commands
        )
        yield from read(text)
        return
    plain = re.sub(r",(\s*[}\]])", r"\1", JSONC.sub(lambda m: m.group(1) or "", text))
    try:
        settings = json.loads(plain)
    except ValueError:  # not JSON: nothing envkit can read as commands
        return
    for found in LIFECYCLE.finditer(text):
        number = text.count("\n", 0, found.start()) + 1
        value = settings.get(found.group(0).strip('"')) if isinstance(settings, dict) else None
        for command in value.values() if isinstance(value, dict) else (value,):
            if isinstance(command, list):
                command = shlex.join(str(word) for word in command)
            if isinstance(command, str):
                yield number, command


def recipe_pip(folder: Path, paths: list[Path], own: str = "") -> RecipePip | None:
    """What the first of the project's recipes that installs packages by name installs, on
    every `pip install` line (`RUN pip install --no-cache-dir transformers==4.41.0 einops`,
    then `RUN pip install xtcocotools`), the project itself (OWN) aside; with the `mim
    install` and `apt-get install` lines of the recipes read, said as not carried. None where
    no recipe names any."""
    untaken: list[str] = []
    first: RecipePip | None = None
    for path in recipes(folder, paths):
        numbers: list[int] = []
        lines: list[str] = []
        name = path.relative_to(folder).as_posix()
        # a dev, docs, packaging or other device's recipe's installs are not the environment's
        # to carry: not advised (pytorch3d's dev/ script installs a torch of 2020)
        main = len(untaken)
        for number, command in recipe_commands(path):
            found = []
            for named in _installs(command, PIP):  # each install of a `&&` chain on its own
                each = [r for r in _pip_arguments(named) if not own or not _same(r, own)]
                found += _with_options(named, [r for r in each if not BY_URL.match(r)])
                urls = (u for u in each if BY_URL.match(u) and not (own and own in u))
                untaken += [f"{name}:{number}: `pip install {u}`: {URL_UNTAKEN}" for u in urls]
            if any(not r.startswith("-") for r in found):
                numbers.append(number)
                lines += found
            mim = (shlex.join(m) for m in _installs(command, MIM))
            untaken += [f"{name}:{number}: `mim install {m}`: {MIM_UNTAKEN}" for m in mim]
            for words in _installs(command, CONDA):
                why = CONDA_UNTAKEN + (
                    "; nvcc: base.variant devel" if NVCC.search(" ".join(words)) else ""
                )
                untaken.append(f"{name}:{number}: `conda install {shlex.join(words)}`: {why}")
            apt = (shlex.join(a) for a in _installs(command, APT) if not _carried(a))
            untaken += [f"{name}:{number}: `apt-get install {a}`: {APT_UNTAKEN}" for a in apt]
        if SIDE_WORD.search(name) or NOT_NVIDIA.search(name):
            del untaken[main:]
        if numbers and first is None:  # every recipe's apt and mim lines are still said
            pip = (r for r in lines if r[0] != "-" and requirement_name(_bare(r)) not in TORCHES)
            first = RecipePip(name, tuple(numbers), tuple(dict.fromkeys(pip)), lines)
    if first is not None:
        return replace(first, untaken=tuple(untaken))
    return RecipePip("", (), (), [], tuple(untaken)) if untaken else None


def _with_options(named: list[str], lines: list[str]) -> list[str]:
    """One install's requirement LINES with the options envkit.yaml keeps on each (NAMED: the
    install's words): built without isolation (flash-attn), found on the https page its -f
    names (JAX's CUDA jaxlib builds, PyG's wheels)."""
    page = next((line.split()[1] for line in lines if carried_page(line)), "")
    index = next((line.split()[1] for line in lines if carried_index(line)), "")
    flags = f" {NO_ISOLATION}" if NO_ISOLATION in named else ""
    flags += f" --find-links {page}" if page else ""
    flags += f" --index {index}" if index else ""
    return [line if line[0] == "-" else line + flags for line in lines]


def carried_index(line: str) -> bool:
    """An index line envkit.yaml can carry as its packages' `index`: an https one other than
    PyTorch's (whose torch builds envkit's own torch layer installs): NVIDIA's pypi.nvidia.com
    for tensorrt_llm, a team's own."""
    option, _, value = line.partition(" ")
    pytorch = "download.pytorch.org" in value
    return option in INDEX_OPTIONS[:3] and value.startswith("https://") and not pytorch


def carried_page(line: str) -> bool:
    """A -f line envkit.yaml can carry: an https page (not a local folder of wheels)."""
    option, _, value = line.partition(" ")
    return option in ("-f", "--find-links") and value.startswith("https://")


def _bare(line: str) -> str:
    """The requirement of a line that may carry options (`flash-attn --no-build-isolation`)."""
    return re.split(r"\s+--", line, maxsplit=1)[0]


def _carried(apt_words: list[str]) -> bool:
    """An apt-get install whose packages the starter envkit.yaml lists already (or none)."""
    return all(word.startswith("-") or word in STARTER_APT for word in apt_words)


def _same(line: str, own: str) -> bool:
    return requirement_name(line) == requirement_name(own)


EXTRA = re.compile(r"[A-Za-z0-9]([-_.A-Za-z0-9]*[A-Za-z0-9])?")  # PEP 685's extra names


def recipe_extras(folder: Path, paths: list[Path], name: str) -> tuple[tuple[str, ...], str, bool]:
    """The extras the project's own recipe installs the project with (`pip install -e
    ".[train]"`, `pip install fschat[model_worker,webui]` for the package NAME), the line that
    does, and whether editable (`-e .`: the team works on its checkout); ((), "", False) where
    no recipe installs it with either. Of the first recipe that does, every such line counts
    (`pip install -e .`, then `pip install -e ".[train]"`: editable, with [train]); uv's
    `uv sync --extra all` names the project's extras too. After the recipes, the install docs'
    code (speechbrain's README: `pip install --editable .`), where only an install of the
    checkout counts: a docs line naming the package installs PyPI's release."""
    sources = [(path, recipe_commands(path), True) for path in recipes(folder, paths)]
    sources += [(path, _commands(code_of(path)), False) for path in install_docs(folder)]
    for path, commands, by_name in sources:
        extras: set[str] = set()
        numbers, editable = [], False
        for number, command in commands:
            synced = _synced_extras(command)
            named, edits = _own_installs(command, name, by_name)
            if synced or named is not None:
                extras |= synced | (named or set())
                editable |= edits
                numbers.append(str(number))
        if extras or editable:
            where = f"{path.relative_to(folder).as_posix()}:{','.join(dict.fromkeys(numbers))}"
            return tuple(sorted(extras)), where, editable
    return (), "", False


def _own_installs(command: str, name: str, by_name: bool) -> tuple[set[str] | None, bool]:
    """The extras COMMAND's pip installs the project NAME with (the checkout, `.[train]`; or,
    BY_NAME, the package by its name), and whether editable; (None, False) where none does."""
    extras: set[str] | None = None
    editable = False
    for words in _installs(command, PIP):
        for before, word in zip(["", *words], words, strict=False):
            own = re.fullmatch(r"\./?(\[.*\])?", word)
            word = f"{name}{own.group(1) or ''}" if own else word
            if not name or requirement_name(word) != requirement_name(name):
                continue
            if own or by_name:
                extras = (extras or set()) | {
                    e for e in Requirement(word).extras if EXTRA.fullmatch(e)
                }
                editable |= bool(own) and before in ("-e", "--editable")
    return extras, editable


def _synced_extras(command: str) -> set[str]:
    """The extras a `uv sync` in COMMAND names (`--extra all`, `--extra=train`)."""
    words = command.replace("=", " ").split()
    synced = any(a == "uv" and b == "sync" for a, b in pairwise(words))
    named = (b for a, b in pairwise(words) if a == "--extra")
    # not one built in a shell variable (private-gpt's `--extra $e`): init then names the
    # project's extras for python.extras, as for a recipe that names none
    extras = {word.strip("\"';") for word in named} if synced else set()
    return {extra for extra in extras if EXTRA.fullmatch(extra)}


def readme_pip(folder: Path, name: str = "", more: bool = False) -> tuple[str, list[str]] | None:
    """(where, its requirement lines) of the first pip line of the project's README that names
    a package (NAME: that package: `pip install torch==2.6.0 --index-url .../cu124`); the
    README's install instructions are the environment of a project with no file of its own.
    With MORE, the same page's later pip lines that add packages come with it (ConvNeXt's
    INSTALL.md: torch on line 14, `pip install timm==0.3.2 tensorboardX six` on line 20, as
    `INSTALL.md:14,20`); a later line naming torch or its companions is another way to the same
    torch (CUDA 11 or 12), not an addition: left to the first."""
    first: tuple[str, list[str]] | None = None
    for where, found in _doc_installs(folder, PIP):
        lines = [line for line in _pip_arguments(found) if not BY_URL.match(line)]  # no name
        named = {requirement_name(line) for line in lines if not line.startswith("-")}
        if first is None and ((name in named) if name else named):
            first = where, lines
            if not more:
                return first
        elif first is not None and _adds(first, where, named):
            more_lines = [line for line in lines if not line.startswith("-")]
            first = f"{first[0]},{where.split(':')[1]}", first[1] + more_lines
    return first


def _adds(first: tuple[str, list[str]], where: str, named: set[str]) -> bool:
    """Whether a pip line at WHERE naming NAMED adds packages to FIRST's: on its page, naming
    none it names already, nor torch and its companions."""
    taken = {requirement_name(line) for line in first[1] if not line.startswith("-")}
    same_page = where.split(":")[0] == first[0].split(":")[0]
    return same_page and bool(named) and not named & {*taken, *TORCHES, *COMPANIONS}


def readme_conda(folder: Path) -> tuple[str, list[str]] | None:
    """(where, its words) of the first `conda install` line of the project's install docs
    that names pytorch, as readme_pip's pip line."""
    found = _doc_installs(folder, CONDA)
    return next((f for f in found if any(re.match(r"(py)?torch\b(?!-)", w) for w in f[1])), None)


def _doc_installs(folder: Path, tool: re.Pattern[str]) -> Iterator[tuple[str, list[str]]]:
    """(where, its arguments) of each `TOOL install` in the code blocks of the project's
    install docs, README first."""
    for path in install_docs(folder, translations=True):
        for number, command in _commands(code_of(path)):
            for words in _installs(command, tool):
                yield f"{path.relative_to(folder).as_posix()}:{number}", words


def _installs(command: str, tool: re.Pattern[str]) -> list[list[str]]:
    """The arguments of each `TOOL install` in a shell COMMAND, up to the shell's next command
    (`&&`, `;`, `|`): words as the shell splits them, so a `;` inside a quoted marker
    (`"numpy<2; python_version<'3.12'"`) stays the marker's."""
    command = MAKE_PIP.sub("pip", command) if tool is PIP else command
    command = SUBSHELL.sub("${…}", command)  # a word's `$(…)` part stays in the word
    # a comment starts a word, as the shell reads it: not a URL's #subdirectory= or #egg=
    command = re.sub(r"(?:^|\s)#.*", "", command)
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split, lexer.commenters = True, ""
    try:
        words = list(lexer)
    except ValueError:  # unbalanced quotes: not a line the shell would run either
        return []
    found = []
    for index in (i for i, word in enumerate(words) if tool.fullmatch(word)):
        rest = list(dropwhile(lambda w: w.startswith("-"), words[index + 1 :]))  # apt-get -y
        if rest[:1] == ["install"]:
            end = next((i for i, w in enumerate(rest) if not w.strip(";&|()<>")), len(rest))
            found.append(rest[1:end])
    return found


def _pip_arguments(arguments: list[str]) -> list[str]:
    """pip install's ARGUMENTS as requirement-file lines: each package named (not a path or a
    variable, nor pip's own tooling), each index option with its URL, each package by URL as
    its URL; other options dropped."""
    tokens = iter(arguments)
    lines = []
    for token in tokens:
        option, given, value = token.partition("=")
        if option in INDEX_OPTIONS:
            lines.append(f"{option} {value if given else next(tokens, '')}")
        elif VALUE_OPTION.fullmatch(option) and not given:
            next(tokens, None)
        elif not token.startswith("-"):
            try:
                requirement = Requirement(token)
            except InvalidRequirement:
                lines += [token] if BY_URL.match(token) else []
                continue
            if requirement_name(token) not in TOOLING:
                lines.append(str(requirement))
    return lines


TASK_UNTAKEN = (
    "not carried: a pixi task runs when asked, after the environment: add what it installs to "
    "packages.pip (a build against torch: no_build_isolation, on base.variant devel) or build.steps"
)


def pixi_tasks(folder: Path) -> list[str]:
    """pixi.toml's tasks that install packages (nerfstudio's `tcnn-install`), said with their
    line: the lock holds none of what they install."""
    path = folder / "pixi.toml"
    if not path.is_file():
        return []
    text = head(path)
    try:
        data = toml_loads(text)
    except TOMLDecodeError:
        return []  # said where pixi.toml is read, not here
    features = [data, *((data.get("feature") or {}).values())]
    tasks = [t for f in features if isinstance(f, dict) for t in (f.get("tasks") or {}).items()]
    said = []
    for name, task in tasks:
        command = task.get("cmd") if isinstance(task, dict) else task
        command = shlex.join(map(str, command)) if isinstance(command, list) else command
        if not isinstance(command, str) or not _installs(command, PIP):
            continue
        # a table of its own (`[feature.dev.tasks.name]`), or `name = ...`
        line = line_of(text, f"tasks.{name}]", default=0) or line_of_key(text, str(name))
        shown = " ".join(command.split())[:160]
        folder_of = task.get("cwd") if isinstance(task, dict) else None
        shown += f"` in {folder_of}" if folder_of else "`"
        said.append(f"pixi.toml:{line}: task {name} (`{shown}): {TASK_UNTAKEN}")
    return said
