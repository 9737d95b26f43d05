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
    full: str  # "12.4.1", the nvidia/cuda tag's version
    wheel: str  # "cu124", the download.pytorch.org index
    min_driver: str  # the toolkit's own minimum driver
    family_min_driver: str  # minimum under minor-version compatibility
    cudnn_tag: str  # "cudnn8" or "cudnn" (cuDNN 9 images drop the number)
    ubuntu: tuple[str, ...]  # nvidia/cuda bases, the default first


@dataclass(frozen=True)
class TorchRelease:
    version: str
    cuda: tuple[str, ...]  # CUDA builds on download.pytorch.org
    images: dict[str, int]  # CUDA version -> cuDNN major of the pytorch/pytorch image
    python: tuple[str, ...]
    confirmed: bool
    default_cuda: str | None


@dataclass(frozen=True)
class CompatTable:
    table_version: str
    as_of: str
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


@cache
def load_table() -> CompatTable:
    raw = load_yaml("compat.yaml")
    cuda = {
        str(ver): CudaRelease(
            version=str(ver),
            full=str(row["full"]),
            wheel=row["wheel"],
            min_driver=str(row["min_driver"]),
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


def resolve_cuda(
    table: CompatTable, torch: TorchRelease, requested: str | None, *, need_image: bool
) -> CudaRelease:
    """Pick the CUDA build for a torch release; with need_image, one with a pytorch/pytorch tag."""
    choices = sorted(torch.images if need_image else torch.cuda, key=version_key)
    if requested is None:
        preferred = torch.default_cuda
        return table.cuda[preferred if preferred in choices else choices[-1]]
    if requested in choices:
        return table.cuda[requested]
    if need_image and requested in torch.cuda:
        raise FieldError(
            f"pytorch/pytorch has no torch {torch.version} image for CUDA {requested}",
            f"choose CUDA {_or_list(choices)}, or use base.flavor: cuda (nvidia/cuda + pip wheels)",
        )
    raise FieldError(
        f"torch {torch.version} has no CUDA {requested} build",
        f"choose {_or_list(choices)}",
    )


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
