"""The CUDA <-> PyTorch <-> base image <-> driver table, and resolution of a request against it."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Literal

import yaml

from envkit.errors import FieldError


@dataclass(frozen=True)
class CudaRelease:
    version: str  # "12.4"
    full: str | None  # "12.4.1", the nvidia/cuda tag's version (None: not yet in the table)
    wheel: str  # "cu124", the download.pytorch.org index
    min_driver: str | None  # the toolkit's own minimum driver (None: not yet in the table)
    family_min_driver: str  # minimum under minor-version compatibility
    cudnn_tag: str  # "cudnn8" or "cudnn" (cuDNN 9 images drop the number)
    ubuntu: tuple[str, ...]  # nvidia/cuda bases, the default first; () = no image
    arm64_ubuntu: tuple[str, ...] = ()  # those of them with a linux/arm64 image

    def ubuntu_on(self, arch: str) -> tuple[str, ...]:
        return self.arm64_ubuntu if arch == "arm64" else self.ubuntu


@dataclass(frozen=True)
class ArchBuilds:
    """One architecture's builds of a torch release."""

    cuda: tuple[str, ...]  # CUDA builds on download.pytorch.org for this architecture
    pypi: str | None  # PyPI's own wheel: its CUDA version, "cpu", or None (no wheel)
    images: dict[str, int]  # pytorch/pytorch images of this architecture


NO_BUILDS = ArchBuilds((), None, {})


@dataclass(frozen=True)
class TorchRelease:
    version: str
    cuda: tuple[str, ...]  # CUDA builds on download.pytorch.org (x86-64)
    images: dict[str, int]  # CUDA version -> cuDNN major of the pytorch/pytorch image
    python: tuple[str, ...]
    confirmed: bool
    default_cuda: str | None  # the build PyPI's own torch wheel carries (x86-64)
    arm64: ArchBuilds = NO_BUILDS  # linux/arm64's builds (Grace nodes)

    def on(self, arch: str) -> ArchBuilds:
        """This release's builds for one architecture (Debian's name: amd64, arm64)."""
        if arch == "arm64":
            return self.arm64
        return ArchBuilds(self.cuda, self.default_cuda, self.images)


@dataclass(frozen=True)
class CompatTable:
    table_version: str
    as_of: str
    sources: dict[str, str]  # source -> when it was last read
    cuda: dict[str, CudaRelease]
    torch: dict[str, TorchRelease]
    default_torch: str
    tensorflow: dict[str, str]  # TensorFlow major.minor -> the CUDA its GPU wheels were built for
    ngc_pytorch: dict[str, dict[str, str]]  # NGC PyTorch release (23.10) -> its torch and CUDA


def version_key(text: str) -> tuple[int, ...]:
    """The first dotted number in `text` as a sortable tuple: "12.4" -> (12, 4), "Docker version
    24.0.7, build afdd53b" -> (24, 0, 7), "v2.20.2" -> (2, 20, 2); () when there is none. The one
    version parser: the table, doctor and the checks' peers all compare through it."""
    found = re.search(r"\d+(?:\.\d+)*", text)
    return tuple(int(part) for part in found.group(0).split(".")) if found else ()


def cuda_of(label: str) -> str:
    """A wheel's local label as its CUDA version: cu124 -> 12.4, cu130 -> 13.0; cpu as it is."""
    digits = label.removeprefix("cu")
    return label if label == "cpu" or not digits.isdigit() else f"{digits[:-1]}.{digits[-1]}"


def nearest(versions: Iterable[str], asked: str) -> str:
    """The version nearest ASKED, part by part (1.10.1 -> 1.11.0 before 2.0.0): the release to
    propose where none admits a pin."""
    want = version_key(asked)

    def distance(version: str) -> tuple[int, ...]:
        have, width = version_key(version), max(len(want), len(version_key(version)))
        padded = [v + (0,) * (width - len(v)) for v in (have, want)]
        return tuple(abs(x - y) for x, y in zip(*padded, strict=True))

    return min(versions, key=distance)


def _or_list(items: list[str]) -> str:
    return "".join(items) if len(items) <= 1 else ", ".join(items[:-1]) + " or " + items[-1]


def _optional(value: object) -> str | None:
    return None if value is None else str(value)


def _arch_builds(raw: dict[str, object] | None) -> ArchBuilds:
    if not raw:
        return NO_BUILDS
    images = raw.get("images") or {}
    assert isinstance(images, dict)
    return ArchBuilds(
        cuda=tuple(str(c) for c in raw.get("cuda") or ()),  # type: ignore[attr-defined]
        pypi=_optional(raw.get("pypi")),
        images={str(k): int(v) for k, v in images.items()},
    )


def load_yaml(name: str) -> dict[str, Any]:
    """One of the YAML data files shipped inside the package (compat.yaml, mirrors.yaml)."""
    text = resources.files("envkit.catalog").joinpath(name).read_text(encoding="utf-8")
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    data = yaml.load(text, Loader=loader)  # noqa: S506 - a SafeLoader (C or Python)
    if not isinstance(data, dict):
        raise RuntimeError(f"envkit's catalog file {name} is damaged")
    return data


@cache
def load_table() -> CompatTable:
    raw = load_yaml("compat.yaml")
    cuda = {
        str(ver): CudaRelease(
            version=str(ver),
            full=_optional(row["full"]),
            wheel=row["wheel"],
            min_driver=_optional(row["min_driver"]),
            family_min_driver=str(row["family_min_driver"]),
            cudnn_tag=row["cudnn_tag"],
            ubuntu=tuple(row["ubuntu"]),
            arm64_ubuntu=tuple(row.get("arm64_ubuntu", ())),
        )
        for ver, row in raw["cuda"].items()
    }
    torch = {
        str(ver): TorchRelease(
            version=str(ver),
            cuda=tuple(row["cuda"]),
            images={str(k): int(v) for k, v in row.get("images", {}).items()},
            python=tuple(row["python"]),
            confirmed=bool(row.get("confirmed", True)),
            default_cuda=row.get("default_cuda"),
            arm64=_arch_builds(row.get("arm64")),
        )
        for ver, row in raw["torch"].items()
    }
    return CompatTable(
        table_version=str(raw["table_version"]),
        as_of=str(raw["as_of"]),
        sources={str(k): str(v) for k, v in raw.get("sources", {}).items()},
        cuda=cuda,
        torch=torch,
        default_torch=str(raw["defaults"]["torch"]),
        tensorflow={str(k): str(v) for k, v in raw.get("tensorflow", {}).items()},
        ngc_pytorch={str(k): dict(v) for k, v in raw.get("ngc_pytorch", {}).items()},
    )


def resolve_torch(table: CompatTable, requested: str | None) -> TorchRelease:
    """Find a torch release; '2.4' means the newest 2.4.x the table knows."""
    if requested is None:
        return table.torch[table.default_torch]
    if requested in table.torch:
        return table.torch[requested]
    matches = [v for v in table.torch if v.startswith(requested + ".")]
    if matches:
        return table.torch[max(matches, key=version_key)]
    known = sorted(table.torch, key=version_key)
    raise FieldError(
        f"torch {requested} is not in envkit's compatibility table",
        f"choose one of {', '.join(known)} (see `envkit compat`)",
    )


AMD64 = ("amd64",)


def cuda_choices(
    table: CompatTable, torch: TorchRelease, flavor: str, archs: tuple[str, ...] = AMD64
) -> list[str]:
    """The CUDA builds a flavor can use on every one of ARCHS: pytorch needs a pytorch/pytorch
    image, cuda an nvidia/cuda base (CUDA 10.2's were deleted), custom brings its own base."""
    found: set[str] | None = None
    for arch in archs:
        builds = torch.on(arch)
        if flavor == "pytorch":
            mine = set(builds.images)
        elif flavor == "cuda":
            mine = {c for c in builds.cuda if table.cuda[c].ubuntu_on(arch) and table.cuda[c].full}
        else:
            mine = set(builds.cuda)
        found = mine if found is None else found & mine
    return sorted(found or (), key=version_key)


def buildable_cuda(version: str | None, cuda: str) -> bool:
    """Whether torch VERSION's CUDA build can be the image's (a pytorch/pytorch image or an
    nvidia/cuda base for it; "cpu" always): a fix `cuda: X` that render would then accept."""
    table = load_table()
    torch = table.torch.get(version or "")
    if cuda == "cpu" or torch is None:
        return cuda == "cpu"
    return cuda in {*cuda_choices(table, torch, "pytorch"), *cuda_choices(table, torch, "cuda")}


def same_major_build(version: str, cuda: str) -> str | None:
    """Torch VERSION's buildable CUDA of CUDA's major nearest it (cudatoolkit 11.3: 11.8), its
    default build first where CUDA names only a major (cupy-cuda12x's "12"); None if none."""
    table = load_table()
    torch = table.torch.get(version)
    if torch is None:
        return None
    major = cuda.split(".")[0]
    builds = {*cuda_choices(table, torch, "pytorch"), *cuda_choices(table, torch, "cuda")}
    found = [c for c in builds if c.split(".")[0] == major]
    if "." not in cuda and torch.default_cuda in found:
        return torch.default_cuda
    return nearest(found, cuda) if found else None


def _on_arm(archs: tuple[str, ...]) -> str:
    return " on linux/arm64" if "arm64" in archs else ""


def releases_with_arm64_cuda(table: CompatTable) -> list[str]:
    """Torch releases with a CUDA build for linux/arm64, each with its builds: the choices a
    refusal names."""
    rows = [t for t in table.torch.values() if t.arm64.cuda]
    shown = [f"{t.version} (CUDA {', '.join(t.arm64.cuda)})" for t in rows]
    # the oldest (nearest to an older pin) and the newest three
    return shown if len(shown) <= 4 else [shown[0], "…", *shown[-3:]]


def resolve_cuda(
    table: CompatTable,
    torch: TorchRelease,
    requested: str | None,
    *,
    flavor: str,
    archs: tuple[str, ...] = AMD64,
) -> CudaRelease:
    """Pick the CUDA build for a torch release among those the flavor can use on every one of
    ARCHS; by default PyPI's build (default_cuda) when it fits, else the newest."""
    choices = cuda_choices(table, torch, flavor, archs)
    if not choices:
        if "arm64" in archs and not torch.arm64.cuda:
            newer = releases_with_arm64_cuda(table)
            raise FieldError(
                f"torch {torch.version} has no CUDA build for linux/arm64",
                f"choose a release that has: {', '.join(newer) or 'none known'} "
                "(`envkit compat --arch arm64`)",
            )
        if flavor == "pytorch" and "arm64" in archs and not torch.arm64.images:
            raise FieldError(
                f"pytorch/pytorch has no linux/arm64 image of torch {torch.version}",
                "use base.flavor: cuda (nvidia/cuda images have linux/arm64; envkit installs "
                "torch's aarch64 CUDA build), or custom with your own base image",
            )
        raise FieldError(
            f"no CUDA build of torch {torch.version} has a {_BASES[flavor]}{_on_arm(archs)}",
            "use base.flavor: custom with your own base image, or another torch release",
        )
    if requested is None:
        preferred = torch.default_cuda
        return table.cuda[preferred if preferred in choices else choices[-1]]
    if requested in choices:
        return table.cuda[requested]
    everywhere = set.intersection(*(set(torch.on(a).cuda) for a in archs))
    if requested in everywhere:
        wheels = "cuda (nvidia/cuda + pip wheels)"
        other = wheels if flavor == "pytorch" else "custom with your own base image"
        raise FieldError(
            f"torch {torch.version}'s CUDA {requested} build has no {_BASES[flavor]}"
            f"{_on_arm(archs)}",
            f"choose CUDA {_or_list(choices)}, or use base.flavor: {other}",
        )
    if requested in torch.cuda and "arm64" in archs:
        raise FieldError(
            f"torch {torch.version}'s CUDA {requested} build has no linux/arm64 wheels",
            f"choose CUDA {_or_list(sorted(torch.arm64.cuda, key=version_key))} "
            "(`envkit compat --arch arm64`)",
        )
    raise FieldError(
        f"torch {torch.version} has no CUDA {requested} build",
        f"choose {_or_list(sorted(torch.cuda, key=version_key))}",
    )


_BASES = {"pytorch": "pytorch/pytorch image", "cuda": "nvidia/cuda base image", "custom": "build"}


def torch_source(
    torch: TorchRelease,
    cuda: CudaRelease | None,
    requested: Literal["auto", "pypi", "pytorch-index"],
    *,
    custom_index: bool,
    archs: tuple[str, ...] = AMD64,
) -> Literal["pypi", "pytorch-index"]:
    """pypi or pytorch-index: where envkit installs torch from. auto takes PyPI (so a mirror
    preset's PyPI serves it) when PyPI's plain wheel is the wanted build on every architecture
    the image is built for, unless the config names its own PyTorch index. PyPI's aarch64
    wheel is a CPU build: a GPU box on Grace gets its torch from the PyTorch index."""
    wanted = cuda.version if cuda is not None else None
    for arch in archs:
        pypi = torch.on(arch).pypi
        if requested == "pypi" and pypi != (wanted or "cpu"):
            carried = f"CUDA {pypi}" if pypi not in (None, "cpu") else (pypi or "no")
            asked = f"CUDA {wanted}" if wanted else "CPU-only"
            raise FieldError(
                f"PyPI's torch {torch.version} for linux/{arch} is the {carried} build, not the "
                f"{asked} one",
                "set torch_source: pytorch-index (or auto)"
                + (f', or cuda: "{pypi}"' if pypi not in (None, "cpu") and arch != "arm64" else ""),
            )
    on_pypi = wanted is not None and all(torch.on(a).pypi == wanted for a in archs)
    if requested != "auto":
        return requested
    return "pypi" if on_pypi and not custom_index else "pytorch-index"


def check_python(torch: TorchRelease, python: str) -> None:
    if python not in torch.python:
        raise FieldError(
            f"torch {torch.version} has no wheels for Python {python}",
            f"choose Python {_or_list(list(torch.python))}, or another torch release",
        )


def pytorch_image(torch: TorchRelease, cuda: CudaRelease, variant: str) -> str:
    cudnn = torch.images.get(cuda.version) or torch.arm64.images[cuda.version]
    return f"pytorch/pytorch:{torch.version}-cuda{cuda.version}-cudnn{cudnn}-{variant}"


def nvidia_cuda_image(
    cuda: CudaRelease, variant: str, ubuntu: str | None, archs: tuple[str, ...] = AMD64
) -> str:
    bases = [u for u in cuda.ubuntu if all(u in cuda.ubuntu_on(a) for a in archs)]
    if not bases or cuda.full is None:
        raise FieldError(
            f"nvidia/cuda has no CUDA {cuda.version} image{_on_arm(archs)} envkit knows of",
            "choose another CUDA version, or base.flavor: custom with your own base image",
        )
    if ubuntu is not None and ubuntu not in bases:
        raise FieldError(
            f"nvidia/cuda {cuda.full} has no Ubuntu {ubuntu} image{_on_arm(archs)}",
            f"choose base.ubuntu {_or_list(bases)}",
        )
    return f"nvidia/cuda:{cuda.full}-{cuda.cudnn_tag}-{variant}-ubuntu{ubuntu or bases[0]}"


def driver_verdict(cuda: CudaRelease, driver: str) -> tuple[str, str]:
    """Compare a host driver with an image's CUDA: ('ok'|'compat'|'too-old', explanation)."""
    have, floor = version_key(driver), cuda.family_min_driver
    if cuda.min_driver is not None and have >= version_key(cuda.min_driver):
        return "ok", f"driver {driver} >= {cuda.min_driver}, the minimum for CUDA {cuda.version}"
    if have >= version_key(floor) and cuda.min_driver is None:
        family = cuda.version.split(".")[0]
        return "compat", (
            f"driver {driver} >= {floor}, the CUDA {family}.x floor; "
            f"CUDA {cuda.version}'s own minimum is not yet in envkit's table"
        )
    if have >= version_key(floor):
        return "compat", (
            f"driver {driver} runs CUDA {cuda.version} only under minor-version compatibility "
            f"(PTX JIT unavailable); upgrade to >= {cuda.min_driver}"
        )
    upgrade = f" to >= {cuda.min_driver}" if cuda.min_driver is not None else ""
    return "too-old", (
        f"driver {driver} is older than {floor}, the oldest that runs "
        f"CUDA {cuda.version}; upgrade the driver{upgrade} or pick an older CUDA"
    )


# torch's companion packages, released with each torch and built against it (the same CUDA
# builds on the same PyTorch index): torchvision's minor is torch's + 15 from torch 2 (torch 1's
# + 1), torchaudio shares torch's version from 2.0 (0.minor before). The releases that broke the
# rule are listed; a torch release the refresh adds gets its companions by the rule.
COMPANION_EXCEPTIONS: dict[str, dict[str, str]] = {
    "2.0.0": {"torchvision": "0.15.1", "torchaudio": "2.0.1"},
    "2.0.1": {"torchvision": "0.15.2", "torchaudio": "2.0.2"},
}
COMPANIONS = ("torchvision", "torchaudio")


def companions(torch_version: str) -> dict[str, str]:
    """The torchvision and torchaudio releases built for this torch release."""
    if torch_version in COMPANION_EXCEPTIONS:
        return dict(COMPANION_EXCEPTIONS[torch_version])
    major, minor, patch = [*version_key(torch_version), 0, 0, 0][:3]
    if major >= 2:
        return {"torchvision": f"0.{minor + 15}.{patch}", "torchaudio": f"{major}.{minor}.{patch}"}
    return {"torchvision": f"0.{minor + 1}.{patch}", "torchaudio": f"0.{minor}.{patch}"}
