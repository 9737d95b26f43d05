"""The torch a project's conda files ask for: an environment.yml's pytorch (or pip section's
torch) with its CUDA however the file writes it (`pytorch-cuda`, `cudatoolkit`, `cuda-version`,
`nvidia::cuda-nvcc`, the nvidia/label channel), its python pin; a conda lock's or pixi.lock's
pytorch build, from the environment whose torch is a CUDA build."""

from __future__ import annotations

import re
from dataclasses import replace
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Any

from envkit.catalog import compat
from envkit.commands.init.torch_wish import (
    NAMES_NO_TORCH,
    OTHER_FRAMEWORKS,
    TorchWish,
    file_text,
    from_lines,
    from_requirements,
)
from envkit.config.rules import TORCH_NAMES
from envkit.errors import ConfigError
from envkit.plan.project.requirement_lines import INCLUDE_OPTIONS, option_of
from envkit.plan.project.torch_lines import CONDA_CUDA, CONDA_TOOLKIT, conda_parts, conda_specifier

if TYPE_CHECKING:
    from envkit.plan.project.conda_locks import CondaLockPackages


def from_conda_lock(path: Path, folder: Path) -> TorchWish | str | None:
    """What a conda-lock.yml or pixi.lock holds for the image's platform (its torch and
    Python); why not (its first problem) where envkit cannot install it; None where it is not
    a lock at all."""
    from envkit.config.load import parse_yaml
    from envkit.plan.project.conda_explicit import is_explicit, read_explicit
    from envkit.plan.project.conda_locks import lock_kind, read_conda_lock

    where = path.relative_to(folder).as_posix()
    text = file_text(path)
    try:
        data: dict[str, Any] = {}
        if is_explicit(text):
            lock = read_explicit(where, text)
        else:
            data, lines = parse_yaml(text, where)
            if lock_kind(data) is None:
                return None
            lock = read_conda_lock(where, data, lines)
    except ConfigError as exc:
        first = exc.issues[0]
        more = f" (and {len(exc.issues) - 1} more)" if len(exc.issues) > 1 else ""
        return f"{where}:{first.line}: {first.problem}{more} (fix: {first.fix})"
    chosen = "default"
    if lock.kind == "pixi" and not _cuda_build(lock.torch):
        chosen, lock = _gpu_environment(where, data, lines) or (chosen, lock)
    python = ".".join(lock.python.split(".")[:2]) if lock.python else None
    others = tuple(e for e in data.get("environments") or () if e != chosen)
    torch = lock.torch
    read = _pixi_manifest(path.parent, folder) if lock.kind == "pixi" else ()
    if torch is None:
        return TorchWish(python=python, environments=others, read=read)
    said = f"{where} (torch {torch[0]})"
    if chosen != "default":
        said = f"{where}, environment {chosen} (torch {torch[0]}, CUDA {torch[1]}"
        said += "; the default environment's torch is not a CUDA build)"
    return TorchWish(
        f"=={torch[0]}",
        torch[1],
        said=said,
        python=python,
        environments=others,
        environment=chosen,
        read=read,
    )


def _pixi_manifest(root: Path, folder: Path) -> tuple[str, ...]:
    """The files a pixi.lock was made from, used with it: its manifest (pixi.toml, or a
    pyproject.toml's [tool.pixi]), and the project's own build files where the manifest
    installs the project itself (`{ path = ".", editable = true }`)."""
    used: list[Path] = []
    for name in ("pixi.toml", "pyproject.toml"):
        text = file_text(root / name)
        if name == "pixi.toml" or "[tool.pixi" in text:
            used += [root / name] if text else []
            if re.search(r"""path\s*=\s*["']\.["']""", text):
                used += [root / "setup.py", root / "setup.cfg", root / "pyproject.toml"]
    return tuple(dict.fromkeys(p.relative_to(folder).as_posix() for p in used if p.is_file()))


def _cuda_build(torch: tuple[str, str | None] | None) -> bool:
    return torch is not None and torch[1] not in (None, "cpu")


def _gpu_environment(
    where: str, data: dict[str, Any], lines: dict[Any, int]
) -> tuple[str, CondaLockPackages] | None:
    """The pixi.lock environment whose torch is a CUDA build (the newest CUDA where several
    are: pixi's cpu/cuda feature pattern), for a lock whose default environment's is not: a GPU
    environment is what envkit builds."""
    from envkit.plan.project.conda_locks import read_conda_lock

    found = []
    for name in data.get("environments") or ():
        # default's was read already; a name is written into envkit.yaml only where plain
        if name == "default" or not re.fullmatch(r"[A-Za-z0-9._-]+", str(name)):
            continue
        try:
            lock = read_conda_lock(where, data, lines, environment=str(name))
        except ConfigError:
            continue
        if lock.torch is not None and _cuda_build(lock.torch):
            found.append((compat.version_key(str(lock.torch[1])), str(name), lock))
    return max(found, key=lambda item: item[:2])[1:] if found else None


def from_conda(path: Path, folder: Path) -> TorchWish:
    from envkit.config.load import parse_yaml

    where = path.relative_to(folder).as_posix()
    try:
        data, _ = parse_yaml(file_text(path), where)
    except ConfigError:
        return TorchWish()
    items = data.get("dependencies") if isinstance(data, dict) else None
    channels = data.get("channels") if isinstance(data, dict) else None
    return _from_items(items, channels, path, folder)


def from_conda_line(where: str, words: list[str]) -> TorchWish:
    """What a `conda install` line of the project's install docs asks (pytorch3d's INSTALL.md:
    `conda install pytorch=1.13.0 torchvision pytorch-cuda=11.6 -c pytorch -c nvidia`), read
    as a file's dependencies and channels are."""
    valued = ("-c", "--channel", "-n", "--name", "-p", "--prefix")
    channels = [b for a, b in pairwise(words) if a in ("-c", "--channel")]
    specs = [w for a, w in zip(["", *words], words, strict=False) if a not in valued]
    wish = _from_items([w for w in specs if not w.startswith("-")], channels, None, None)
    return replace(wish, said=f"{where}: conda install {' '.join(words)}")


def _from_items(items: Any, channels: Any, path: Path | None, folder: Path | None) -> TorchWish:
    """The wish of a conda environment's dependencies (PATH's in FOLDER: its pip section's
    files are read) and channels."""
    where = path.relative_to(folder).as_posix() if path and folder else ""
    torch: Any = None
    cuda: str | None = None
    python: str | None = None
    names: list[str] = []
    read: tuple[str, ...] = ()
    for item in items if isinstance(items, list) else ():
        if isinstance(item, dict) and isinstance(item.get("pip"), list) and path and folder:
            pip = _pip_section(path, folder, names, [str(line) for line in item["pip"]])
            read += pip.read
            if pip.specifier and not (torch and torch[1]):  # a pin before a bare `pytorch`
                torch = ("pip", pip.specifier)
            cuda = cuda or pip.cuda
            continue
        _, name, rest = conda_parts(str(item))
        names.append(name)
        if name == "python" and re.match(r"=*3\.\d+", rest):
            python = ".".join(rest.lstrip("=").split(".")[:2])
        elif name in TORCH_NAMES:
            specifier = conda_specifier(rest)
            torch = ("conda", str(specifier) if specifier is not None else "")
        elif name in (*CONDA_CUDA, *CONDA_TOOLKIT) and re.match(r"=*\d", rest):
            cuda = cuda or ".".join(rest.lstrip("=").split(".")[:2]).rstrip("*.")  # a pin
        elif name in ("cpuonly", "pytorch-cpu"):
            cuda = "cpu"
    cuda = cuda or _cuda_channel(channels)
    if not torch:
        none = any(name in OTHER_FRAMEWORKS for name in names)
        said = f"{where} {NAMES_NO_TORCH}" if none else ""
        return TorchWish(cuda=cuda, none=none, said=said, python=python, read=read)
    asks = "'s pip section asks torch" if torch[0] == "pip" else " asks pytorch"
    said = f"{where}{asks} {torch[1] or '(any)'}"
    return TorchWish(torch[1] or None, cuda, said=said, python=python, read=read)


def _pip_section(path: Path, folder: Path, names: list[str], lines: list[str]) -> TorchWish:
    """A conda file's pip section as conda hands it to pip: its own lines, and the files its
    `-r` lines name (open_flamingo's torch pin is in its requirements.txt), those files read."""
    wish = from_lines(names, path.relative_to(folder).as_posix(), lines)
    read: tuple[str, ...] = ()
    for line in lines:
        option, value = option_of(line) if line.startswith("-") else ("", "")
        included = (path.parent / value).resolve()
        if option not in INCLUDE_OPTIONS or not included.is_relative_to(folder.resolve()):
            continue
        found = from_requirements(included, folder)
        read += found.read
        wish = wish if wish.specifier or not found.specifier else found
    return replace(wish, read=read)


def _cuda_channel(channels: Any) -> str | None:
    """The CUDA of NVIDIA's versioned channel (`nvidia/label/cuda-11.8.0`), where the file
    takes its toolkit from one."""
    for channel in channels if isinstance(channels, list) else ():
        found = re.fullmatch(r"nvidia/label/cuda-(\d+)\.(\d+)(?:\.\d+)?", str(channel))
        if found:
            return f"{found.group(1)}.{found.group(2)}"
    return None
