"""What torch a project's own file asks for, so `envkit init` proposes `torch:` and `cuda:` from
it: a requirements file's torch line (its +cuXYZ label, its PyTorch index line), pyproject's
dependency, uv.lock's pinned release, a conda file's pytorch, pytorch-cuda, cudatoolkit and
cpuonly; and whether the project runs without torch (TensorFlow, JAX)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from packaging.markers import InvalidMarker, Marker
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

from envkit.catalog import compat
from envkit.catalog.compat import cuda_of
from envkit.config.rules import TORCH_NAMES
from envkit.errors import ConfigError, FieldError
from envkit.files import read_regular
from envkit.plan.project.cuda_wheels import first_built_for
from envkit.plan.project.lock_graph import names, packages_by_name
from envkit.plan.project.pipenv import is_pipenv, pipenv_requirements
from envkit.plan.project.project_files import file_limit
from envkit.plan.project.project_requirements import project_requirements
from envkit.plan.project.requirement_lines import (
    INCLUDE_OPTIONS,
    INDEX_OPTIONS,
    logical_lines,
    option_of,
)
from envkit.plan.project.torch_lines import (
    PYG_PAGE,
    TorchContext,
    applies,
    wheel_pin,
)

if TYPE_CHECKING:
    pass

OTHER_FRAMEWORKS = (
    "tensorflow",
    "tensorflow-cpu",
    "tensorflow-gpu",
    "jax",
    "jaxlib",
    "flax",
    "tf-nightly",
)  # not keras: Keras 3 runs on torch as well (Deep-Live-Cam's keras beside its torch code)
TENSORFLOWS = ("tensorflow", "tensorflow-gpu", "tensorflow-cpu")  # not tensorflow-hub & co
LINUX = TorchContext(None, None, None)  # markers judged for a Linux box
NAMES_NO_TORCH = "names no torch"  # said as it is, not as "torch from ..."
NO_TORCH = re.compile(r" (names?|locks) no torch")  # a file's (or files') own word for it
INDEX_BUILD = re.compile(r"download\.pytorch\.org/whl/(cu\d+|cpu)")


@dataclass(frozen=True)
class TorchWish:
    specifier: str | None = None  # PEP 440, local labels dropped ("==2.4.1", ">=2.1,<2.6")
    cuda: str | None = None  # "12.1", or "cpu"
    none: bool = False  # another framework and no torch: torch: none
    said: str = ""  # where it came from, for init's message
    python: str | None = None  # a conda file's python=X.Y
    environments: tuple[str, ...] = ()  # a pixi.lock's others than the one it installs
    environment: str = "default"  # the pixi.lock environment it installs
    extras: tuple[str, ...] = ()  # pyproject's extras that hold its torch (python.extras)
    read: tuple[str, ...] = ()  # a requirements file and its -r includes: used with it
    companions: tuple[str, ...] = ()  # torchvision==0.15.2: the torch it was built for


def file_text(path: Path) -> str:
    try:
        return read_regular(path, file_limit(), path.name).decode("utf-8")
    except (FieldError, UnicodeDecodeError):
        return ""


def tensorflow_cuda(requirement: Requirement) -> tuple[str, str | None]:
    """(the newest TensorFlow release the table knows that REQUIREMENT admits, the CUDA to
    propose for it): the one its wheels were built for, else the nearest newer CUDA of the same
    major with an nvidia/cuda image (a major's libraries keep their sonames: 11.2 runs on
    11.3's); None where no image can carry it (CUDA 10)."""
    table = compat.load_table()
    admitted = [
        release
        for release in table.tensorflow
        if any(requirement.specifier.contains(f"{release}.{patch}") for patch in range(10))
    ]
    # a pin newer (or older) than the table: the nearest row, said so by the caller
    release = max(admitted, key=compat.version_key, default=None)
    release = release or compat.nearest(table.tensorflow, str(requirement.specifier) or "0")
    built = table.tensorflow[release]
    imaged = [
        version
        for version, row in table.cuda.items()
        if row.full and row.ubuntu and version.split(".")[0] == built.split(".")[0]
        if compat.version_key(version) >= compat.version_key(built)
    ]
    return release, min(imaged, key=compat.version_key, default=None)


def _tensorflow_wish(tensorflow: Requirement | None, said: str) -> TorchWish:
    """torch: none, with the CUDA the project's TensorFlow was built for."""
    if tensorflow is None or canonicalize_name(tensorflow.name) == "tensorflow-cpu":
        return TorchWish(none=True, said=said)
    release, cuda = tensorflow_cuda(tensorflow)
    built = compat.load_table().tensorflow[release]
    if not any(tensorflow.specifier.contains(f"{release}.{patch}") for patch in range(10)):
        said += f"; {tensorflow} is not in envkit's table, the nearest release is {release}"
    said += f"; TensorFlow {release} was built for CUDA {built}"
    said += f" ({cuda} is the nearest with an image)" if cuda and cuda != built else ""
    said += "" if cuda else ", which no nvidia/cuda image envkit knows carries"
    return TorchWish(none=True, cuda=cuda, said=said)


def _without_torch(names: list[str], where: str, tensorflow: Requirement | None) -> TorchWish:
    if not any(name in OTHER_FRAMEWORKS for name in names):
        return TorchWish()
    said = f"{where} {NAMES_NO_TORCH}"
    if {"jax", "jaxlib", "flax"} & {*names} and not any(
        n.startswith("jax") and "cuda" in n for n in names
    ):
        said += " (its jax has no CUDA extra: a CPU jaxlib; jax[cuda12] runs on the GPU)"
    return _tensorflow_wish(tensorflow, said)


def from_lines(names: list[str], where: str, lines: list[str]) -> TorchWish:
    wish, companions = _from_lines(names, where, lines)
    if not companions or wish.none:
        return wish
    said = f"{wish.said} with {', '.join(companions)}" if wish.said else f"{where}: {companions[0]}"
    return replace(wish, companions=companions, said=said)


def _from_lines(
    names: list[str], where: str, lines: list[str]
) -> tuple[TorchWish, tuple[str, ...]]:
    """The wish of a file's lines, and its pinned companions (torchvision, torchaudio)."""
    cuda, pyg = None, None
    requirements: list[Requirement] = []
    for line in lines:
        # PyTorch's index names a CUDA; PyG's page a torch minor and CUDA, the environment's
        build, page = INDEX_BUILD.search(line), PYG_PAGE.search(line)
        if line.startswith(INDEX_OPTIONS) and (build or page):
            cuda, pyg = cuda_of(build.group(1)) if build else cuda, page or pyg
            continue
        try:  # the requirement without its options (--hash, grok-1's `jax[cuda12] -f URL`)
            requirement = Requirement(re.split(r"\s+-", line, maxsplit=1)[0])
        except InvalidRequirement:
            continue
        if applies(requirement, LINUX):  # not a line for another system (sys_platform == 'darwin')
            requirements.append(requirement)
    for requirement in requirements:
        names.append(canonicalize_name(requirement.name))
        # jax[cuda12] or alphafold's jaxlib==0.4.26+cuda12.cudnn89: a GPU jaxlib
        if any("cuda" in part for part in (*requirement.extras, str(requirement.specifier))):
            names.append(f"{names[-1]}-cuda")
    torch = next((wheel_pin(r) or r for r in requirements if _named(r, TORCH_NAMES)), None)
    tensorflow = next((r for r in requirements if _named(r, TENSORFLOWS)), None)
    pinned = tuple(str(r) for r in requirements if _named(r, compat.COMPANIONS) and r.specifier)
    if pyg is not None:
        return _on_pyg_page(torch or Requirement("torch"), cuda, where, pyg), pinned
    if torch is None and not pinned:
        return _without_torch(names, where, tensorflow), ()
    wish = _torch_line(torch or Requirement("torch"), cuda, where)
    if wish.cuda is None and (built := first_built_for(requirements)):  # cupy-cuda111: 11.1
        wish = replace(wish, cuda=built[0], said=f"{wish.said}; {built[1]}: CUDA {built[0]}")
    return wish, pinned


def _named(requirement: Requirement, names: Iterable[str]) -> bool:
    return canonicalize_name(requirement.name) in names


def _torch_line(torch: Any, cuda: str | None, where: str) -> TorchWish:
    if labels := {s.version.split("+", 1)[1] for s in torch.specifier if "+" in s.version}:
        cuda = cuda_of(sorted(labels)[0])
    specifier = ",".join(f"{s.operator}{s.version.split('+')[0]}" for s in torch.specifier)
    return TorchWish(specifier or None, cuda, said=f"{where}: {torch}")


def _on_pyg_page(torch: Any, cuda: str | None, where: str, page: re.Match[str]) -> TorchWish:
    """A file that takes PyG's wheels from a page built for torch X.Y and a CUDA: its torch is
    of that minor, its CUDA the page's; a torch pin of the file's own decides the release (the
    page is then read for envkit's torch: render says so)."""
    minor, label = page.group(1), page.group(2)
    said = f"{where}: PyG's wheels for torch {minor} ({label})"
    build = "cpu" if label == "cpu" else cuda_of(label)
    pinned = ",".join(f"{s.operator}{s.version.split('+')[0]}" for s in torch.specifier)
    return TorchWish(pinned or f"~={minor}.0", build or cuda, said=said)


PACKAGE_FILES = ("setup.py", "pyproject.toml")  # what `-e FOLDER` installs the package by
COMPILED_FOR = re.compile(r"^#.*(?:pip-compile with Python|--python-version[= ])\s*(3\.\d+)", re.M)


def from_requirements(path: Path, folder: Path) -> TorchWish:
    lines: list[str] = []
    queue, seen = [path], set[Path]()
    while queue and len(seen) < 32:
        current = queue.pop(0)
        if current in seen or not current.is_file():
            continue
        seen.add(current)
        text = file_text(current)
        if is_pipenv(current.name):  # a Pipfile(.lock): the lines Pipenv installs
            try:
                text = pipenv_requirements(current.name, text)
            except ConfigError:
                return TorchWish()  # render says why, at its line
        for _, _, line in logical_lines(text):
            option, value = option_of(line) if line.startswith("-") else ("", "")
            if option in INCLUDE_OPTIONS:  # read as the plan reads it: -r x, --requirement=x
                queue.append((current.parent / value).resolve())
            elif option in ("-e", "--editable"):  # `-e .`: the package's own file, installed
                package = (current.parent / value).resolve()
                seen |= {f for n in PACKAGE_FILES if (f := package / n).is_file()}
            else:
                lines.append(line)
    wish = from_lines([], path.relative_to(folder).as_posix(), lines)
    inside = [p for p in seen if p.is_relative_to(folder.resolve())]
    # the Python a compiled file was resolved for: its pins hold there (pip-compile's header;
    # uv pip compile's command line, where it names one)
    compiled = COMPILED_FOR.search(file_text(path)[:4000])
    python = compiled.group(1) if compiled and compiled.group(1) in PYTHONS else None
    read = tuple(p.relative_to(folder.resolve()).as_posix() for p in inside)
    return replace(wish, read=read, python=python)


def from_pyproject(data: dict[str, Any], where: str, extras: tuple[str, ...] = ()) -> TorchWish:
    """What the project asks for, with the EXTRAS its own recipe installs it with."""
    try:  # the requirements render installs, read by the plan's own reader
        wish = _with_extras(data, where, extras)
        if not wish.said and not extras:  # no torch, no other framework: is torch in an extra?
            wish = _from_extras(data, where) or wish
    except ConfigError:  # render then says why, at its line
        wish = TorchWish()
    return replace(wish, python=admitted_python(data))


def _with_extras(data: dict[str, Any], where: str, extras: tuple[str, ...]) -> TorchWish:
    wanted = [str(r) for r in project_requirements(where, "", data, extras)]
    wish = from_lines([], f"{where} [{','.join(extras)}]" if extras else where, wanted)
    return replace(wish, extras=extras)


def declared_extras(data: dict[str, Any]) -> dict[str, Any]:
    """A pyproject's extras: [project.optional-dependencies], else Poetry's [tool.poetry.extras]."""
    project, tool = data.get("project") or {}, data.get("tool") or {}
    named = project.get("optional-dependencies") if isinstance(project, dict) else None
    named = named or ((tool.get("poetry") or {}).get("extras") if isinstance(tool, dict) else None)
    return named if isinstance(named, dict) else {}


def _from_extras(data: dict[str, Any], where: str) -> TorchWish | None:
    """Where torch is only in an extra (`pip install .[cu121]`, hatch's features): the extra
    whose torch pin is the newest CUDA build, else the first pinning torch, as python.extras
    (one by URL is left: its build is unchecked)."""
    wishes = [_with_extras(data, where, (str(extra),)) for extra in declared_extras(data)]
    found = [w for w in wishes if w.specifier and re.fullmatch(r"[\w.-]+", w.extras[0])]
    gpu = [w for w in found if w.cuda not in (None, "cpu")]
    return max(gpu, key=lambda w: compat.version_key(str(w.cuda)), default=None) or next(
        iter(found), None
    )


PYTHONS = ("3.11", "3.12", "3.10", "3.13", "3.9")  # envkit's default first, then the nearest


def admitted_python(data: dict[str, Any]) -> str | None:
    """The Python pyproject.toml's requires-python (or Poetry's `python`) admits, envkit's
    default first (spleeter's <3.12: 3.11; cleanrl's <3.11: 3.10), by any of its patch
    releases (`>=3.13.14,<3.14`: 3.13); None where it says none."""
    from poetry.core.constraints.version import parse_constraint

    project, tool = data.get("project") or {}, data.get("tool") or {}
    poetry = (tool.get("poetry") or {}).get("dependencies") or {} if isinstance(tool, dict) else {}
    asked = project.get("requires-python") if isinstance(project, dict) else None
    asked = asked or (poetry.get("python") if isinstance(poetry, dict) else None)
    try:  # PEP 440's ranges and Poetry's ^ and ~ alike
        constraint = parse_constraint(str(asked)) if isinstance(asked, str) else None
    except ValueError:
        return None
    admits = (
        p for p in PYTHONS if constraint and constraint.allows_any(parse_constraint(f"{p}.*"))
    )
    return next(admits, None)


def from_uv_lock(lock: dict[str, Any], where: str) -> TorchWish:
    """uv.lock's, poetry.lock's or pdm.lock's torch; no torch and another framework (spleeter's
    TensorFlow) is torch: none, as a file naming them is."""
    packages = packages_by_name(lock)  # as the plan reads the lock
    if torch := packages.get("torch"):
        version = str(_on_linux(torch).get("version", ""))
        cuda = cuda_of(version.split("+", 1)[1]) if "+" in version else None
        said = f"{where} locks torch {version}"
        extras = _locked_extras(lock)
        said += f" in the extra {extras[0]}" if extras else ""
        return TorchWish(f"=={version.split('+')[0]}", cuda, said=said, extras=extras)
    if not packages.keys() & {*OTHER_FRAMEWORKS}:
        return TorchWish()
    found = [p for name, each in packages.items() if name in TENSORFLOWS for p in each]
    try:  # the locked release: its CUDA
        tensorflow = Requirement(f"{found[0]['name']}=={found[0]['version']}") if found else None
    except (InvalidRequirement, KeyError):
        tensorflow = None
    return _tensorflow_wish(tensorflow, f"{where} locks no torch")


# The image's platform, as a lock's markers name it.
LINUX_X86 = {"sys_platform": "linux", "platform_system": "Linux", "platform_machine": "x86_64"}


def _on_linux(entries: list[dict[str, Any]]) -> dict[str, Any]:
    """The entry the image installs where a lock forks a package by platform (uv's PyTorch
    guide: PyPI's torch off Linux, the CUDA index's `2.6.0+cu126` on it, in either order):
    the first whose resolution-markers hold on Linux x86-64, else the first."""
    for entry in entries:
        for marker in entry.get("resolution-markers") or ():
            try:
                if Marker(str(marker)).evaluate(LINUX_X86):
                    return entry
            except InvalidMarker:
                continue
    return entries[0]


def _locked_extras(lock: dict[str, Any]) -> tuple[str, ...]:
    """The extra a lock installs its torch with, where only one does (cosmos-curate's `local`):
    poetry.lock's [extras] table, or uv.lock's project entry's optional-dependencies."""
    own = [p.get("optional-dependencies") for p in lock.get("package") or () if isinstance(p, dict)]
    named = next((t for t in (lock.get("extras"), *own) if isinstance(t, dict) and t), {})
    extras = [str(e) for e, d in named.items() if isinstance(d, list) and "torch" in names(d)]
    return tuple(extras[:1]) if extras and re.fullmatch(r"[\w.-]+", extras[0]) else ()


def on_lock(wish: TorchWish, shown: str, lock: TorchWish, locked_in: str) -> TorchWish:
    """A file that pins no torch release (speechbrain's requirements.txt: torch>=2.1.0) takes
    the one the project's own lock holds (LOCKED_IN: its uv.lock), where the file and its
    companions admit it: the release the team runs, not envkit's newest."""
    pinned = (lock.specifier or "").removeprefix("==")
    if wish.none or (wish.specifier or "").startswith("=="):
        return wish
    admitted = SpecifierSet(wish.specifier or "").contains(pinned, prereleases=True)
    if not admitted or not companions_admit(wish, pinned):
        return wish
    said = f"{wish.said or f'{shown} names no torch'}; {locked_in} locks torch {pinned}"
    return replace(wish, specifier=lock.specifier, cuda=wish.cuda or lock.cuda, said=said)


NEAREST = "the nearest release envkit can build"  # init keeps the file, one line to change


def _nearest(wish: TorchWish, releases: list[str]) -> tuple[str | None, str | None, str]:
    """Where no release in the table admits the file's pin (a torch older than the table),
    the release nearest the version it names, with the file's CUDA where that release has a
    build of it: one line of the file to change, not the whole file lost."""
    pinned = re.search(r"\d+(\.\d+)*", wish.specifier or "")
    if pinned is None:
        return None, None, f"{wish.said}: no torch release envkit's table knows admits it"
    chosen = compat.nearest(releases, pinned.group(0))
    cuda = wish.cuda if wish.cuda and compat.buildable_cuda(chosen, wish.cuda) else None
    return chosen, cuda, f"{wish.said}, which no release envkit can build admits: {NEAREST}"


def _for_companions(wish: TorchWish, releases: list[str]) -> list[str]:
    """Of RELEASES, those whose torchvision and torchaudio the file's own pins admit, where
    any does (`torch>=2.0.1` with `torchvision==0.15.2`: torch 2.0.1, so that the file is kept
    whole); else all of them, and render says which pin wants another torch, at its line."""
    return [r for r in releases if companions_admit(wish, r)] or releases


def companions_admit(wish: TorchWish, release: str) -> bool:
    """Whether the file's pinned torchvision and torchaudio admit those built for RELEASE."""
    built = compat.companions(release)
    asked = map(Requirement, wish.companions)
    return all(a.specifier.contains(built[canonicalize_name(a.name)], True) for a in asked)


def release_for(wish: TorchWish) -> tuple[str | None, str | None, str]:
    """(torch, cuda, note) to propose: the newest release in the table the wish admits, and
    its CUDA build; a note where the wish cannot be met as asked."""
    table = compat.load_table()
    if wish.none:
        return "none", wish.cuda, ""
    releases = sorted(table.torch, key=compat.version_key, reverse=True)
    specifier = SpecifierSet(wish.specifier or "")
    admitted = _for_companions(
        wish, [r for r in releases if specifier.contains(r, prereleases=True)]
    )
    note = ""
    if not admitted:
        return _nearest(wish, releases)
    # envkit's default release where the file admits it, else the newest admitted no newer than
    # it (rows past the default may not be confirmed yet), else the newest; each preferring a
    # release with the CUDA build the file asks for.
    default = compat.version_key(table.default_torch)
    settled = [r for r in admitted if compat.version_key(r) <= default] or admitted
    with_build = [r for r in settled if wish.cuda and compat.buildable_cuda(r, wish.cuda)]
    of_major = [r for r in settled if wish.cuda and compat.same_major_build(r, wish.cuda)]
    chosen = (with_build or of_major or settled)[0]
    cuda = wish.cuda
    if cuda and not compat.buildable_cuda(chosen, cuda):
        same = compat.same_major_build(chosen, cuda)
        nearest = f"CUDA {same}, the nearest of its major," if same else "its default"
        note = f"torch {chosen} has no CUDA {cuda} build envkit can build; {nearest} is proposed"
        note = "" if same and "." not in cuda else note  # "12": any 12.x meets it
        cuda = same
    return chosen, cuda, note
