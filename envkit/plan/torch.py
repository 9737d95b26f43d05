"""Which torch, which CUDA build, from which base image or index: the plan's torch decisions."""

from __future__ import annotations

from dataclasses import dataclass

from envkit.catalog import compat
from envkit.catalog.compat import CudaRelease, TorchRelease
from envkit.config.load import LoadedSpec
from envkit.errors import FieldError


@dataclass(frozen=True)
class TorchPlan:
    version: str | None
    cuda: str | None  # "12.4", "cpu", or None when torch comes with the image or apt
    preinstalled: bool
    index_url: str | None  # the PyTorch wheel index; None with source pypi (pip.conf's index)
    source: str = "image"  # image | pypi | pytorch-index

    @property
    def requirement(self) -> str:
        return f"torch=={self.version}"


def resolve_torch(loaded: LoadedSpec) -> tuple[TorchRelease | None, CudaRelease | None]:
    spec = loaded.spec
    table = compat.load_table()
    if spec.base.flavor == "custom" and spec.torch is None:
        return None, None  # torch comes with the custom image (or from apt), not from envkit
    try:
        torch = compat.resolve_torch(table, spec.torch)
    except FieldError as exc:
        raise loaded.error(("torch",), exc, spec.torch) from None
    if spec.cuda == "cpu":
        if spec.base.flavor == "pytorch":
            raise loaded.error(
                ("cuda",),
                FieldError(
                    "pytorch/pytorch images are CUDA builds",
                    "use base.flavor: custom with a plain image for a CPU-only torch",
                ),
                "cpu",
            )
        return torch, None
    # An explicit base.image brings its own base, whatever the flavor says of torch.
    flavor = "custom" if spec.base.image is not None else spec.base.flavor
    try:
        cuda = compat.resolve_cuda(table, torch, spec.cuda, flavor=flavor)
    except FieldError as exc:
        raise loaded.error(("cuda",), exc, spec.cuda) from None
    return torch, cuda


def base_image(loaded: LoadedSpec, torch: TorchRelease | None, cuda: CudaRelease | None) -> str:
    spec = loaded.spec
    if spec.base.image is not None:
        return spec.base.image
    assert torch is not None and cuda is not None  # custom requires image; cpu needs custom
    if spec.base.flavor == "pytorch":
        if spec.cudnn is not None and int(spec.cudnn) != torch.images[cuda.version]:
            raise loaded.error(
                ("cudnn",),
                FieldError(
                    f"the torch {torch.version} / CUDA {cuda.version} image ships cuDNN "
                    f"{torch.images[cuda.version]}",
                    "remove cudnn or match it",
                ),
                spec.cudnn,
            )
        return compat.pytorch_image(torch, cuda, spec.base.variant)
    tag_major = "8" if cuda.cudnn_tag == "cudnn8" else "9"
    if spec.cudnn is not None and spec.cudnn != tag_major:
        raise loaded.error(
            ("cudnn",),
            FieldError(
                f"nvidia/cuda {cuda.full} images ship cuDNN {tag_major}",
                "remove cudnn or choose a CUDA version whose images ship the cuDNN you need",
            ),
            spec.cudnn,
        )
    try:
        return compat.nvidia_cuda_image(cuda, spec.base.variant, spec.base.ubuntu)
    except FieldError as exc:
        raise loaded.error(("base", "ubuntu"), exc, spec.base.ubuntu) from None


def torch_plan(
    loaded: LoadedSpec, torch: TorchRelease | None, cuda: CudaRelease | None
) -> TorchPlan:
    spec = loaded.spec
    if torch is None:
        return TorchPlan(None, None, preinstalled=True, index_url=None)
    wheel = cuda.wheel if cuda else "cpu"
    if spec.base.flavor == "pytorch" and spec.base.image is None:
        if spec.torch_source != "auto":
            raise loaded.error(
                ("torch_source",),
                FieldError(
                    "torch comes with the pytorch/pytorch image",
                    "remove torch_source, or use base.flavor: cuda or custom to install torch",
                ),
                spec.torch_source,
            )
        return TorchPlan(torch.version, cuda.version if cuda else None, True, None)
    custom_index = spec.mirrors.pytorch_index is not None
    try:
        source = compat.torch_source(torch, cuda, spec.torch_source, custom_index=custom_index)
    except FieldError as exc:
        raise loaded.error(("torch_source",), exc, spec.torch_source) from None
    index = spec.mirrors.pytorch_index or f"https://download.pytorch.org/whl/{wheel}"
    build = cuda.version if cuda else "cpu"
    if source == "pypi":
        return TorchPlan(torch.version, build, False, None, source)
    return TorchPlan(torch.version, build, False, str(index), source)
