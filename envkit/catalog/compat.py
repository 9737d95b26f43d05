"""The CUDA <-> PyTorch <-> base image <-> driver table, and resolution of a request against it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from envkit.catalog._data import load_yaml
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


@dataclass(frozen=True)
class TorchRelease:
    version: str
    cuda: tuple[str, ...]  # CUDA builds on download.pytorch.org
    images: dict[str, int]  # CUDA version -> cuDNN major of the pytorch/pytorch image
    python: tuple[str, ...]
    confirmed: bool
    default_cuda: str | None  # the build PyPI's own torch wheel carries


@dataclass(frozen=True)
class CompatTable:
    table_version: str
    as_of: str
    sources: dict[str, str]  # source -> when it was last read
    cuda: dict[str, CudaRelease]
    torch: dict[str, TorchRelease]
    default_torch: str


def version_key(text: str) -> tuple[int, ...]:
    """The first dotted number in `text` as a sortable tuple: "12.4" -> (12, 4), "Docker version
    24.0.7, build afdd53b" -> (24, 0, 7), "v2.20.2" -> (2, 20, 2); () when there is none. The one
    version parser: the table, doctor and the checks' peers all compare through it."""
    found = re.search(r"\d+(?:\.\d+)*", text)
    return tuple(int(part) for part in found.group(0).split(".")) if found else ()


def _or_list(items: list[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " or " + items[-1]


def _optional(value: object) -> str | None:
    return None if value is None else str(value)


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


def cuda_choices(table: CompatTable, torch: TorchRelease, flavor: str) -> list[str]:
    """The CUDA builds a flavor can use: pytorch needs a pytorch/pytorch image, cuda an
    nvidia/cuda base (CUDA 10.2's were deleted), custom brings its own base."""
    if flavor == "pytorch":
        return sorted(torch.images, key=version_key)
    builds = sorted(torch.cuda, key=version_key)
    if flavor == "cuda":
        return [c for c in builds if table.cuda[c].ubuntu and table.cuda[c].full]
    return builds


def resolve_cuda(
    table: CompatTable, torch: TorchRelease, requested: str | None, *, flavor: str
) -> CudaRelease:
    """Pick the CUDA build for a torch release among those the flavor can use; by default
    PyPI's build (default_cuda) when it fits, else the newest."""
    choices = cuda_choices(table, torch, flavor)
    if not choices:
        raise FieldError(
            f"no CUDA build of torch {torch.version} has a {_BASES[flavor]}",
            "use base.flavor: custom with your own base image, or another torch release",
        )
    if requested is None:
        preferred = torch.default_cuda
        return table.cuda[preferred if preferred in choices else choices[-1]]
    if requested in choices:
        return table.cuda[requested]
    if requested in torch.cuda:
        other = (
            "base.flavor: cuda (nvidia/cuda + pip wheels)"
            if flavor == "pytorch"
            else ("base.flavor: custom with your own base image")
        )
        raise FieldError(
            f"torch {torch.version}'s CUDA {requested} build has no {_BASES[flavor]}",
            f"choose CUDA {_or_list(choices)}, or use {other}",
        )
    raise FieldError(
        f"torch {torch.version} has no CUDA {requested} build",
        f"choose {_or_list(sorted(torch.cuda, key=version_key))}",
    )


_BASES = {
    "pytorch": "pytorch/pytorch image",
    "cuda": "nvidia/cuda base image",
    "custom": "build",
}


def torch_source(
    torch: TorchRelease, cuda: CudaRelease | None, requested: str, *, custom_index: bool
) -> str:
    """pypi or pytorch-index: where envkit installs torch from. auto takes PyPI (so a mirror
    preset's PyPI serves it) when PyPI's plain wheel is the wanted build, unless the config
    names its own PyTorch index."""
    on_pypi = cuda is not None and cuda.version == torch.default_cuda
    if requested == "pypi" and not on_pypi:
        wanted = f"CUDA {cuda.version}" if cuda else "CPU-only"
        raise FieldError(
            f"PyPI's torch {torch.version} is the CUDA {torch.default_cuda} build, not the "
            f"{wanted} one",
            f'set cuda: "{torch.default_cuda}", or torch_source: pytorch-index (or auto)',
        )
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
    cudnn = torch.images[cuda.version]
    return f"pytorch/pytorch:{torch.version}-cuda{cuda.version}-cudnn{cudnn}-{variant}"


def nvidia_cuda_image(cuda: CudaRelease, variant: str, ubuntu: str | None) -> str:
    if not cuda.ubuntu or cuda.full is None:
        raise FieldError(
            f"nvidia/cuda has no CUDA {cuda.version} image envkit knows of",
            "choose another CUDA version, or base.flavor: custom with your own base image",
        )
    if ubuntu is not None and ubuntu not in cuda.ubuntu:
        raise FieldError(
            f"nvidia/cuda {cuda.full} has no Ubuntu {ubuntu} image",
            f"choose base.ubuntu {_or_list(list(cuda.ubuntu))}",
        )
    chosen = ubuntu or cuda.ubuntu[0]
    return f"nvidia/cuda:{cuda.full}-{cuda.cudnn_tag}-{variant}-ubuntu{chosen}"


def driver_verdict(cuda: CudaRelease, driver: str) -> tuple[str, str]:
    """Compare a host driver with an image's CUDA: ('ok'|'compat'|'too-old', explanation)."""
    have = version_key(driver)
    if cuda.min_driver is None:
        family = cuda.version.split(".")[0]
        if have >= version_key(cuda.family_min_driver):
            return "compat", (
                f"driver {driver} >= {cuda.family_min_driver}, the CUDA {family}.x floor; "
                f"CUDA {cuda.version}'s own minimum is not yet in envkit's table"
            )
        return "too-old", (
            f"driver {driver} is older than {cuda.family_min_driver}, the oldest that runs "
            f"CUDA {cuda.version}; upgrade the driver or pick an older CUDA"
        )
    if have >= version_key(cuda.min_driver):
        return "ok", f"driver {driver} >= {cuda.min_driver}, the minimum for CUDA {cuda.version}"
    if have >= version_key(cuda.family_min_driver):
        return "compat", (
            f"driver {driver} runs CUDA {cuda.version} only under minor-version compatibility "
            f"(PTX JIT unavailable); upgrade to >= {cuda.min_driver}"
        )
    return "too-old", (
        f"driver {driver} is older than {cuda.family_min_driver}, the oldest that runs "
        f"CUDA {cuda.version}; upgrade the driver to >= {cuda.min_driver} or pick an older CUDA"
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
