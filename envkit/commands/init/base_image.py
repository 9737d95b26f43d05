"""The image the project's own recipe builds on (its Dockerfile's `FROM`, the ARG defaults it
is written with substituted), read for what it says about the environment its team runs:
pytorch/pytorch's torch and CUDA (or a `pytorch:X-cudaY` tag on another registry), nvidia/cuda's
CUDA, an NGC PyTorch release's torch and CUDA (from compat.yaml's `ngc_pytorch:`), and whether
it is a devel image (nvcc: the project builds CUDA code). Without one, the torch line of the
project's README (`pip install torch==2.6.0 --index-url .../cu124`). init proposes these where
the chosen file leaves them open."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from envkit.catalog import compat
from envkit.commands.init.conda_wish import from_conda_line
from envkit.commands.init.discovery import RECIPE, head, recipes
from envkit.commands.init.recipe_lines import ARG, readme_conda, readme_pip, substituted
from envkit.commands.init.torch_wish import (
    NAMES_NO_TORCH,
    TorchWish,
    companions_admit,
    from_lines,
    release_for,
)

FROM = re.compile(r"^FROM\s+(?:--platform=\S+\s+)?(\S+)", re.IGNORECASE)
REGISTRY = re.compile(r"^(?:docker\.io/|nvcr\.io/)?")
PYTORCH = re.compile(r"(?:.*/)?pytorch:(\d+\.\d+(?:\.\d+)?)-cuda(\d+\.\d+)")  # any registry's
CUDA = re.compile(r"nvidia/cuda:(\d+\.\d+)")
NGC = re.compile(r"nvcr\.io/nvidia/pytorch:(\d\d\.\d\d)")


@dataclass(frozen=True)
class RecipeBase:
    said: str  # Dockerfile:7 builds on IMAGE (ARGs substituted), or README.md:9 installs torch
    torch: str | None = None  # the torch release it carries
    cuda: str | None = None  # its CUDA, major.minor
    devel: bool = False  # a devel image (nvcc)


def _read(image: str, where: str) -> RecipeBase | None:
    """What IMAGE says, None where it is no image envkit reads (python:3.11, ubuntu...)."""
    devel, named = "devel" in image.rpartition(":")[2], REGISTRY.sub("", image)
    where = f"{where} builds on {image}"
    if found := PYTORCH.match(named):
        return RecipeBase(where, found.group(1), found.group(2), devel)
    if found := CUDA.match(named):
        return RecipeBase(where, None, found.group(1), devel)
    if (found := NGC.match(image)) and (row := compat.load_table().ngc_pytorch.get(found[1])):
        # NGC's PyTorch images carry the whole CUDA toolkit (nvcc), and a torch built from a
        # commit between releases (2.1.0a0+32f93b1): the release it leads to is the one proposed
        torch = Version(row["torch"]).base_version if row["torch"] else None
        cuda = ".".join(row["cuda"].split(".")[:2]) if row["cuda"] else None
        return RecipeBase(where, torch, cuda, True)
    return None


def recipe_base(folder: Path, paths: list[Path]) -> RecipeBase | None:
    """The first image a Dockerfile of the project builds on that envkit reads, unless envkit
    cannot build on it and another Dockerfile's it can (OpenPCDet's CUDA 10.2 Dockerfile beside
    its cu116.Dockerfile); a multi-stage recipe is devel where any of its stages is (its build
    stage compiles with nvcc)."""
    found_bases: list[RecipeBase] = []
    for path in recipes(folder, paths):
        if not RECIPE.search(path.name):
            continue
        arguments: dict[str, str] = {}
        bases = []
        for number, line in enumerate(head(path).splitlines(), 1):
            if found := ARG.match(line.strip()):
                arguments[found.group(1)] = found.group(2).strip("\"'")
            elif found := FROM.match(line.strip()):
                image = substituted(found.group(1), arguments)
                where = f"{path.relative_to(folder).as_posix()}:{number}"
                bases += [read] if (read := _read(image, where)) else []
        if bases:
            found_bases.append(replace(bases[0], devel=any(b.devel for b in bases)))
    if not found_bases:
        return _readme(folder)
    return next((b for b in found_bases if _buildable(b)), found_bases[0])


def _buildable(base: RecipeBase) -> bool:
    """Whether a torch release envkit knows (the image's own, where it carries one) has a
    build for the image's CUDA."""
    releases = (base.torch,) if base.torch else tuple(compat.load_table().torch)
    return base.cuda is None or any(compat.buildable_cuda(r, base.cuda) for r in releases)


def _readme(folder: Path) -> RecipeBase | None:
    """The torch release (and CUDA, from its index) the README's pip line installs, else its
    conda line (the install docs' `conda install pytorch=1.13.0 pytorch-cuda=11.6`)."""
    if found := readme_pip(folder, "torch"):
        wish = from_lines([], *found)
    elif conda := readme_conda(folder):
        wish = from_conda_line(*conda)
    else:
        return None
    pinned = re.fullmatch(r"==(\d+\.\d+(?:\.\d+)?)", wish.specifier or "")
    return RecipeBase(wish.said, pinned.group(1) if pinned else None, wish.cuda)


def on_base(wish: TorchWish, shown: str, base: RecipeBase) -> TorchWish:
    """A file that pins no torch release (yolov5's torch>=1.8.0) takes the one the project's
    own image builds on, where the file admits it: the release its team runs, not envkit's; a
    file that names no CUDA takes the image's."""
    verb = NAMES_NO_TORCH.replace("names", "name") if " and " in shown else NAMES_NO_TORCH
    said = f"{wish.said or f'{shown} {verb}'}; {base.said}"
    if wish.none and base.cuda and not wish.cuda:  # TensorFlow's, JAX's: the image's CUDA
        images = [v for v, row in compat.load_table().cuda.items() if row.ubuntu]
        cuda = compat.nearest(images, base.cuda)
        said += "" if cuda == base.cuda else f" (CUDA {cuda}: the nearest envkit has an image of)"
        return replace(wish, cuda=cuda, said=said)
    if wish.none or (wish.specifier or "").startswith("==") or wish.cuda == "cpu":
        return wish
    admitted = SpecifierSet(wish.specifier or "").contains(base.torch or "", prereleases=True)
    if base.torch and admitted and companions_admit(wish, base.torch):
        return replace(wish, specifier=f"=={base.torch}", cuda=base.cuda, said=said)
    if not base.cuda or wish.cuda:
        return wish
    # the CUDA the team's image runs (OpenPCDet's cu116 image installs spconv-cu116), said
    # where it holds torch below the newest the file admits (an ARG default of years ago)
    newest, held = release_for(wish)[0], release_for(replace(wish, cuda=base.cuda))[0]
    if wish.specifier and held != newest:
        said += (
            f" (torch {held} is the newest with a CUDA {base.cuda} build; the file admits "
            f"{newest}: change `cuda:` to have it)"
        )
    return replace(wish, cuda=base.cuda, said=said)
