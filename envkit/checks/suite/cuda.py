"""cuda.*: is the GPU stack usable from this torch?"""

from __future__ import annotations

from ..core import devices, fingerprint
from ..core.context import Context
from ..core.registry import Skip, check, ensure

# The skip where there is no CUDA and none is required.
NO_CUDA_SKIP = "no CUDA device here and none required (verify.require_gpu is false)"


@check(
    "cuda.build",
    reference="the release and CUDA build envkit installed (the plan), and the build's own flags",
)
def build(ctx: Context) -> str:
    """Says what the torch build is, with or without a driver: its CUDA version, compiled
    architectures, cuDNN and NCCL. Catches a swapped torch (a CPU wheel from a mirror, another
    release pulled in by a package) against the build envkit installed."""
    import torch

    facts = fingerprint.build_facts(torch)
    release = torch.__version__.split("+")[0]
    built = facts["cuda_runtime"] or "cpu"
    if ctx.expected_torch is not None:
        ensure(
            release == ctx.expected_torch,
            f"torch {release} found, {ctx.expected_torch} installed by envkit",
        )
    wanted = ctx.expected_cuda
    if wanted is not None:
        ensure(
            built == wanted or built.startswith(wanted + "."),
            f"torch {torch.__version__} is the {_build_name(built)}, not the {_build_name(wanted)}",
        )
    if built == "cpu":
        if ctx.require_gpu:
            raise AssertionError(
                f"torch {torch.__version__} is a CPU-only build; the environment requires GPUs"
            )
        if wanted is None:
            raise Skip(f"torch {torch.__version__} is a CPU-only build; GPUs not required")
        return f"torch {torch.__version__}, the CPU-only build envkit installed"
    archs = facts["arch_list"]
    ensure(
        bool(archs), f"torch {torch.__version__} is a CUDA build with no architectures compiled in"
    )
    return (
        f"torch {torch.__version__}: CUDA {built} build; archs {' '.join(archs)}; "
        f"cuDNN {facts['cudnn'] or 'absent'}; NCCL {facts['nccl'] or 'absent'}"
    )


def _build_name(cuda: str) -> str:
    return "CPU-only build" if cuda == "cpu" else f"CUDA {cuda} build"


@check(
    "cuda.available",
    timeout_s=60,
    reference="torch.cuda.is_available() against the spec's demand for GPUs",
)
def available(ctx: Context) -> str:
    """Catches a CPU-only torch, a container started without GPUs, or a broken driver when the
    spec asks for GPUs (a fail, not a skip)."""
    import torch

    if torch.cuda.is_available():
        count = torch.cuda.device_count()
        return f"{count} device(s), torch {torch.__version__} CUDA {torch.version.cuda}"
    if torch.version.cuda is None:
        why = f"torch {torch.__version__} is a CPU-only build"
    elif fingerprint.driver_version() is None:
        why = (
            "no NVIDIA driver is visible (container started without GPUs, or no driver on the host)"
        )
    else:
        why = f"torch's CUDA {torch.version.cuda} cannot use driver {fingerprint.driver_version()}"
    if ctx.require_gpu:
        raise AssertionError(why + "; the environment requires GPUs")
    raise Skip(why + "; GPUs not required")


@check("cuda.device_count", reference="verify.expected_gpus")
def device_count(ctx: Context) -> str:
    """Catches fewer GPUs than expected (a partial device request, a dead GPU)."""
    have = ctx.gpu_count()
    want = ctx.expected_gpus
    if want is None:
        if not have and not ctx.require_gpu:
            raise Skip("no GPUs expected (verify.expected_gpus unset)")
        ensure(have >= 1 or not ctx.require_gpu, "no GPU visible but GPUs are required")
        return f"{have} visible (no expected count set)"
    ensure(have >= want, f"{have} GPU(s) visible, {want} expected")
    return f"{have} visible, {want} expected"


@check(
    "cuda.driver_runtime",
    reference="the driver's own CUDA version against the build's torch.version.cuda",
)
def driver_runtime(ctx: Context) -> str:
    """Catches a driver too old for torch's CUDA runtime (errors 803/804 later, at first use)."""
    runtime = devices.cuda_torch(ctx, NO_CUDA_SKIP).version.cuda
    supported = fingerprint.driver_cuda_version()
    if supported is None:
        raise Skip("could not ask libcuda for the driver's CUDA version")
    have = tuple(int(p) for p in supported.split("."))
    need = tuple(int(p) for p in str(runtime).split(".")[:2])
    driver = fingerprint.driver_version()
    # Same major: minor-version compatibility lets an older driver run a newer minor runtime.
    ensure(
        have[0] >= need[0],
        f"driver {driver} supports CUDA {supported}; torch needs {runtime}: upgrade the driver",
    )
    note = "" if have >= need else " (minor-version compatibility: PTX JIT unavailable)"
    return f"driver {driver} (CUDA {supported}) runs torch's CUDA {runtime}{note}"


@check("cuda.arch_list", reference="each GPU's compute capability against the build's arch list")
def arch_list(ctx: Context) -> str:
    """Catches a GPU whose compute capability torch was not compiled for ('no kernel image is
    available for execution on the device')."""
    torch = devices.cuda_torch(ctx, NO_CUDA_SKIP)
    archs = torch.cuda.get_arch_list()
    seen = []
    for index in range(torch.cuda.device_count()):
        major, minor = torch.cuda.get_device_capability(index)
        sm = major * 10 + minor
        compiled = [int(a.split("_")[1].rstrip("a")) for a in archs if a.startswith("sm_")]
        ptx = [int(a.split("_")[1].rstrip("a")) for a in archs if a.startswith("compute_")]
        # Binary code runs on the same major with an equal or higher minor; PTX JITs upwards.
        ok = any(c // 10 == major and c <= sm for c in compiled) or any(p <= sm for p in ptx)
        ensure(ok, f"GPU {index} is sm_{sm}, not in torch's arch list {archs}")
        seen.append(f"sm_{sm}")
    return f"{', '.join(seen)} covered by {' '.join(archs)}"


@check("cuda.cudnn", reference="the same convolution on the CPU (a different implementation)")
def cudnn(ctx: Context) -> str:
    """Catches a missing or broken cuDNN (convolutions fail at first use)."""
    torch = devices.cuda_torch(ctx, NO_CUDA_SKIP)
    ensure(torch.backends.cudnn.is_available(), "cuDNN is not available to torch")
    version = torch.backends.cudnn.version()
    x = torch.randn(2, 3, 16, 16, device="cuda")
    conv = torch.nn.Conv2d(3, 4, 3).cuda()
    with torch.backends.cudnn.flags(enabled=True):
        gpu = conv(x)
    cpu = torch.nn.functional.conv2d(x.cpu(), conv.weight.cpu(), conv.bias.cpu())
    ensure(
        torch.allclose(gpu.cpu(), cpu, rtol=1e-3, atol=1e-3), "cuDNN convolution disagrees with CPU"
    )
    return f"cuDNN {version}; a convolution matches the CPU"


@check("cuda.nccl", reference="the build's own NCCL availability and version")
def nccl(ctx: Context) -> str:
    """Catches a torch build without NCCL (multi-GPU training cannot start)."""
    torch = devices.cuda_torch(ctx, NO_CUDA_SKIP)
    try:
        version = torch.cuda.nccl.version()
    except Exception as exc:
        raise AssertionError(f"NCCL is missing from this torch build: {exc}") from None
    return "NCCL " + (".".join(map(str, version)) if isinstance(version, tuple) else str(version))
