"""The GPUs checks run on. Every per-GPU code path asks here, so tests can run those paths on
CPU (a fake GPU, named so in the test) where no real GPU exists."""

from __future__ import annotations

from typing import Any

from .context import Context
from .registry import Skip

BENCH_MATMUL_SIZE = {"bf16": 8192, "fp16": 8192, "tf32": 8192, "fp32": 4096}
BENCH_COPY_BYTES = 2 << 30  # device memory: each of two buffers, far beyond any L2
BENCH_LINK_BYTES = 256 << 20  # host link: one pinned buffer each way
NO_CUDA = "CUDA is not available but the environment requires GPUs"


def cuda_torch(ctx: Context, skip_why: str) -> Any:
    """torch, where CUDA is available; else a fail where GPUs are required, a Skip where not."""
    import torch

    if torch.cuda.is_available():
        return torch
    if ctx.require_gpu:
        raise AssertionError(NO_CUDA)
    raise Skip(skip_why)


def gpu_devices(ctx: Context, minimum: int = 1) -> list[Any]:
    """cuda:0..n-1, or Skip (GPUs not required) / fail (required or expected) when too few."""
    import torch

    have = ctx.gpu_count()
    want = max(ctx.expected_gpus or 0, 1 if ctx.require_gpu else 0)
    if have < minimum:
        if have == 0 and ctx.require_gpu:
            raise AssertionError(NO_CUDA)
        if want >= minimum:
            raise AssertionError(f"{have} GPU(s) visible, {want} expected")
        raise Skip(f"needs {minimum} GPU(s), {have} visible" if have else "no CUDA device")
    return [torch.device("cuda", index) for index in range(have)]


def device_name(device: Any) -> str:
    import torch

    return str(torch.cuda.get_device_name(device))
