"""Which torch, which CUDA build, from which base image or index: the plan's torch decisions."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from envkit.catalog import compat
from envkit.catalog.compat import CudaRelease, TorchRelease
from envkit.config.load import LoadedSpec
from envkit.errors import FieldError
from envkit.plan.project.conda_locks import CondaLockPackages

DEFAULT_PYTHON = "3.11"  # where envkit chooses the Python and the torch release supports it
NO_TORCH = "none"  # torch: none, a project without torch (TensorFlow, JAX)
CPU_BASE = "python:{python}-slim-bookworm"  # a CPU box's base: Debian with the chosen Python
# Where the environment's torch comes from: with the base image (a pytorch image's, apt's, a
# custom image's, or none), the pip index (PyPI's wheel is the build), the PyTorch wheel index,
# or the project's conda lock (conda's pytorch, which envkit checks and installs nothing over).
TorchFrom = Literal["image", "pypi", "pytorch-index", "conda-lock"]


@dataclass(frozen=True)
class TorchPlan:
    version: str | None
    cuda: str | None  # "12.4", "cpu", or None when torch comes with the image or apt
    preinstalled: bool
    index_url: str | None  # the PyTorch wheel index; None with source pypi (pip.conf's index)
    source: TorchFrom = "image"
    companions: tuple[str, ...] = ()  # torchvision==X...: the project asks, from torch's index
    none: bool = False  # torch: none

    @property
    def requirement(self) -> str:
        return f"torch=={self.version}"


def archs_of(loaded: LoadedSpec) -> tuple[str, ...]:
    """The architectures (Debian's names) the image is built for, as far as the plan can know
    them: those `platforms:` names; where it names none, the engine's own, which only the build
    learns, so the table is read for x86-64, the architecture of every engine without a
    `platforms:` that could differ (an Arm engine builds natively what the same rows give)."""
    from envkit.platforms import architecture

    return tuple(architecture(p).arch for p in loaded.spec.platforms or ()) or compat.AMD64


def resolve_torch(loaded: LoadedSpec) -> tuple[TorchRelease | None, CudaRelease | None]:
    spec = loaded.spec
    table = compat.load_table()
    if spec.base.flavor == "custom" and spec.torch is None:
        return None, None  # torch comes with the custom image (or from apt), not from envkit
    if spec.torch == NO_TORCH:
        return None, _cuda_without_torch(loaded)
    with loaded.blaming(("torch",), spec.torch):
        torch = compat.resolve_torch(table, spec.torch)
    if spec.cuda == "cpu":
        return torch, None  # a CPU wheel on a Python base (CPU_BASE) or base.image
    # An explicit base.image brings its own base, whatever the flavor says of torch.
    flavor = "custom" if spec.base.image is not None else spec.base.flavor
    archs = archs_of(loaded)
    where = ("cuda",) if spec.cuda is not None else ("platforms",)
    with loaded.blaming(where, spec.cuda or ", ".join(spec.platforms or ())):
        cuda = compat.resolve_cuda(table, torch, spec.cuda, flavor=flavor, archs=archs)
    return torch, cuda


def _cuda_without_torch(loaded: LoadedSpec) -> CudaRelease | None:
    """torch: none still chooses a CUDA image (TensorFlow and JAX need its libraries), unless
    the box is a CPU one or its base is the user's."""
    spec = loaded.spec
    if spec.base.flavor == "pytorch" and spec.base.image is None and spec.cuda != "cpu":
        error = FieldError(
            "pytorch/pytorch images carry torch",
            "use base.flavor: cuda (a CUDA image without torch) or custom with base.image",
        )
        raise loaded.error(("torch",), error, NO_TORCH)
    if spec.cuda == "cpu" or spec.base.image is not None:
        return None
    table = compat.load_table()
    newest = compat.resolve_torch(table, None)
    archs = archs_of(loaded)
    with loaded.blaming(("cuda",), spec.cuda):
        if spec.cuda is None:  # the default torch's default: its newest libraries
            return compat.resolve_cuda(table, newest, None, flavor="cuda", archs=archs)
        # any CUDA with an nvidia/cuda image: TensorFlow 2.12 wants 11.8, whatever torch has
        imaged = [c for c, r in table.cuda.items() if r.full and all(r.ubuntu_on(a) for a in archs)]
        if spec.cuda not in imaged:
            raise FieldError(
                f"nvidia/cuda has no CUDA {spec.cuda} image envkit knows of",
                f"choose {', '.join(sorted(imaged, key=compat.version_key))}",
            )
        return table.cuda[spec.cuda]


def cpu_python(loaded: LoadedSpec, torch: TorchRelease | None) -> str:
    """The Python of a CPU box's base image: the one asked, else the default torch supports."""
    from envkit.config.python_section import python_version

    asked = python_version(loaded.spec.python)
    if asked:
        return asked
    return DEFAULT_PYTHON if torch is None or DEFAULT_PYTHON in torch.python else torch.python[-1]


def base_image(loaded: LoadedSpec, torch: TorchRelease | None, cuda: CudaRelease | None) -> str:
    spec = loaded.spec
    if spec.base.image is not None:
        return spec.base.image
    if cuda is None:  # a CPU box (cuda: cpu), or torch: none without CUDA
        return CPU_BASE.format(python=cpu_python(loaded, torch))
    assert torch is not None or spec.torch == NO_TORCH
    if spec.base.flavor == "pytorch" and torch is not None:
        if spec.cudnn is not None and int(spec.cudnn) != torch.images[cuda.version]:
            error = FieldError(
                f"the torch {torch.version} / CUDA {cuda.version} image ships cuDNN "
                f"{torch.images[cuda.version]}",
                "remove cudnn or match it",
            )
            raise loaded.error(("cudnn",), error, spec.cudnn)
        return compat.pytorch_image(torch, cuda, spec.base.variant)
    tag_major = "8" if cuda.cudnn_tag == "cudnn8" else "9"
    if spec.cudnn is not None and spec.cudnn != tag_major:
        error = FieldError(
            f"nvidia/cuda {cuda.full} images ship cuDNN {tag_major}",
            "remove cudnn or choose a CUDA version whose images ship the cuDNN you need",
        )
        raise loaded.error(("cudnn",), error, spec.cudnn)
    with loaded.blaming(("base", "ubuntu"), spec.base.ubuntu):
        return compat.nvidia_cuda_image(cuda, spec.base.variant, spec.base.ubuntu, archs_of(loaded))


def torch_plan(
    loaded: LoadedSpec, torch: TorchRelease | None, cuda: CudaRelease | None
) -> TorchPlan:
    spec = loaded.spec
    if torch is None:
        none = spec.torch == NO_TORCH
        return TorchPlan(None, None, preinstalled=not none, index_url=None, none=none)
    wheel = cuda.wheel if cuda else "cpu"
    if spec.base.flavor == "pytorch" and spec.base.image is None and cuda is not None:
        if spec.torch_source != "auto":
            error = FieldError(
                "torch comes with the pytorch/pytorch image",
                "remove torch_source, or use base.flavor: cuda or custom to install torch",
            )
            raise loaded.error(("torch_source",), error, spec.torch_source)
        return TorchPlan(torch.version, cuda.version if cuda else None, True, None)
    custom_index = spec.mirrors.pytorch_index is not None
    with loaded.blaming(("torch_source",), spec.torch_source):
        source = compat.torch_source(
            torch, cuda, spec.torch_source, custom_index=custom_index, archs=archs_of(loaded)
        )
    index = spec.mirrors.pytorch_index or f"https://download.pytorch.org/whl/{wheel}"
    build = cuda.version if cuda else "cpu"
    return TorchPlan(torch.version, build, False, None if source == "pypi" else str(index), source)


def with_companions(
    plan: TorchPlan, wanted: tuple[str, ...], inline: tuple[str, ...] = ()
) -> tuple[TorchPlan, list[str]]:
    """The torch plan with the companions the project's files and packages.pip (INLINE) ask
    for, installed beside torch from its index; a pytorch image carries its own, said for
    packages.pip's (a file's line says it in the rewritten file)."""
    if plan.preinstalled:
        carried = ", ".join(inline)
        return plan, [
            f"envkit.yaml: packages.pip: {carried}: the pytorch image carries its "
            "own, built for its torch; not installed over it"
        ] if inline else []
    if not wanted:
        return plan, []
    return replace(plan, companions=tuple(sorted(set(wanted)))), []


def torch_from_conda_lock(
    loaded: LoadedSpec, planned: TorchPlan, lock: CondaLockPackages | None
) -> tuple[TorchPlan, list[str]]:
    """Where the project's conda lock installs pytorch, that is the environment's torch: envkit
    installs none over it (the build checks the lock's), and a different torch in envkit.yaml
    is refused with both values. (The plan, and the notes to show.)"""
    found = lock.torch if lock is not None else None
    if found is None or lock is None:
        return planned, []
    version, cuda = found
    asked = loaded.spec.torch
    if asked not in (None, NO_TORCH) and not (version + ".").startswith(str(asked) + "."):
        error = FieldError(
            f"{lock.source} installs pytorch {version}; envkit.yaml asks for torch {asked}",
            f'set torch: "{version}" (or leave torch out), or relock the environment',
        )
        raise loaded.error(("torch",), error, str(asked))
    wanted = loaded.spec.cuda
    if wanted and cuda and (wanted == "cpu") != (cuda == "cpu"):  # a GPU build asked of a CPU one
        built = "a CPU build" if cuda == "cpu" else f"built for CUDA {cuda}"
        error = FieldError(
            f"{lock.source}'s pytorch {version} is {built}; envkit.yaml asks for cuda {wanted}",
            f'set cuda: "{cuda}" (or leave cuda out), or relock the environment for it',
        )
        raise loaded.error(("cuda",), error, str(wanted))
    plan = TorchPlan(version, cuda or planned.cuda, True, None, source="conda-lock")
    return plan, [
        f"torch {version} comes from {lock.source} (the lock's own), checked in the image"
    ]
