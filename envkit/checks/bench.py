"""bench.*: performance against the GPU's published peak. GPU only (CPU figures say nothing
about a GPU environment), measured with CUDA events after warm-up, random inputs, L2 flushed."""

from __future__ import annotations

import statistics
from typing import Any

from . import devices
from .context import Context
from .peaks import peak_for
from .registry import Skip, check, ensure

L2_FLUSH_BYTES = 256 * 1024 * 1024


def _cuda(ctx: Context) -> Any:
    import torch

    if not torch.cuda.is_available():
        if ctx.require_gpu:
            raise AssertionError("CUDA is not available but the environment requires GPUs")
        raise Skip("benchmarks need a CUDA GPU")
    return torch


def time_cuda(torch: Any, fn: Any, *, warmup: int, iters: int, flush: Any = None) -> list[float]:
    """Seconds per call, one CUDA-event pair per iteration; `flush` runs untimed before each."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        if flush is not None:
            flush()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1000.0)
    return times


def _matmul(ctx: Context, check_id: str, dtype_name: str) -> str:
    torch = _cuda(ctx)
    gpu = devices.gpu_devices(ctx)[0]
    size = devices.BENCH_MATMUL_SIZE[dtype_name]
    dtype = {
        "bf16": torch.bfloat16,
        "fp16": torch.float16,
        "tf32": torch.float32,
        "fp32": torch.float32,
    }[dtype_name]
    if dtype_name == "bf16" and not torch.cuda.is_bf16_supported():
        raise Skip("this GPU has no bf16")
    previous = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = dtype_name == "tf32"  # pinned explicitly either way
    try:
        torch.manual_seed(0)
        a = torch.randn(size, size, device=gpu, dtype=dtype)
        b = torch.randn(size, size, device=gpu, dtype=dtype)
        out = torch.empty(size, size, device=gpu, dtype=dtype)
        scratch = torch.empty(L2_FLUSH_BYTES // 4, device=gpu, dtype=torch.float32)
        times = time_cuda(
            torch,
            lambda: torch.matmul(a, b, out=out),
            warmup=10,
            iters=30,
            flush=lambda: scratch.fill_(1.0),
        )
    finally:
        torch.backends.cuda.matmul.allow_tf32 = previous
    tflops = 2 * size**3 / statistics.median(times) / 1e12
    best = 2 * size**3 / min(times) / 1e12
    peak = peak_for(devices.device_name(gpu))
    peak_value = getattr(peak, dtype_name, None) if peak else None
    row = ctx.metric(
        f"matmul_{dtype_name}",
        tflops,
        "TFLOP/s",
        peak=peak_value,
        threshold=ctx.threshold(check_id),
    )
    ctx.metric(f"matmul_{dtype_name}_best", best, "TFLOP/s", peak=peak_value)
    share = (
        f", {row['fraction_of_peak']:.0%} of {peak.name}'s {peak_value}"
        if peak and peak_value
        else " (no published peak for this GPU)"
    )
    return f"{size}³ {dtype_name}: median {tflops:.1f} TFLOP/s{share}"


@check(
    "bench.matmul_bf16",
    timeout_s=180,
    bench=True,
    reference="the GPU's published bf16 dense peak (checks/peaks.py); timed with CUDA events",
)
def matmul_bf16(ctx: Context) -> str:
    """Catches a GPU far below its bf16 matmul peak (throttling, wrong clocks, a shared GPU)."""
    return _matmul(ctx, "bench.matmul_bf16", "bf16")


@check(
    "bench.matmul_fp16",
    timeout_s=180,
    bench=True,
    reference="the GPU's published fp16 dense peak (checks/peaks.py); timed with CUDA events",
)
def matmul_fp16(ctx: Context) -> str:
    """Catches a GPU far below its fp16 matmul peak."""
    return _matmul(ctx, "bench.matmul_fp16", "fp16")


@check(
    "bench.matmul_tf32",
    timeout_s=180,
    bench=True,
    reference="the GPU's published tf32 dense peak (checks/peaks.py); timed with CUDA events",
)
def matmul_tf32(ctx: Context) -> str:
    """Catches a GPU far below its tf32 matmul peak (or TF32 silently unavailable)."""
    return _matmul(ctx, "bench.matmul_tf32", "tf32")


@check(
    "bench.matmul_fp32",
    timeout_s=180,
    bench=True,
    reference="the GPU's published fp32 peak (checks/peaks.py); timed with CUDA events",
)
def matmul_fp32(ctx: Context) -> str:
    """Catches a GPU far below its fp32 peak."""
    return _matmul(ctx, "bench.matmul_fp32", "fp32")


@check(
    "bench.memory_bandwidth",
    timeout_s=180,
    bench=True,
    reference="the GPU's published memory bandwidth (checks/peaks.py)",
)
def memory_bandwidth(ctx: Context) -> str:
    """Catches device memory far below its bandwidth (bytes read + written, buffer >> L2)."""
    torch = _cuda(ctx)
    count = 512 * 1024 * 1024 // 4  # 2 GiB per buffer
    free = torch.cuda.mem_get_info()[0]
    if free < 3 * count * 4:
        count = free // 16
    src = torch.randn(count, device="cuda")
    dst = torch.empty_like(src)
    times = time_cuda(torch, lambda: dst.copy_(src), warmup=5, iters=20)
    moved = 2 * count * 4  # read + write
    gbs = moved / statistics.median(times) / 1e9
    ensure(torch.equal(dst[:1024], src[:1024]), "the copy is wrong")
    peak = peak_for(torch.cuda.get_device_name(0))
    row = ctx.metric(
        "memory_bandwidth",
        gbs,
        "GB/s",
        peak=peak.memory_gbs if peak else None,
        threshold=ctx.threshold("bench.memory_bandwidth"),
    )
    share = f", {row['fraction_of_peak']:.0%} of {peak.name}'s {peak.memory_gbs}" if peak else ""
    return f"device copy {moved / 2**30:.0f} GiB moved: {gbs:.0f} GB/s{share}"


@check(
    "bench.host_device",
    timeout_s=120,
    bench=True,
    reference="the link's published rate (PCIe generation and width, checks/peaks.py)",
)
def host_device(ctx: Context) -> str:
    """Catches a slow host link (PCIe downgraded, pageable memory): pinned H2D and D2H."""
    torch = _cuda(ctx)
    count = 256 * 1024 * 1024 // 4
    host = torch.randn(count).pin_memory()
    device = torch.empty(count, device="cuda")
    h2d = time_cuda(torch, lambda: device.copy_(host, non_blocking=True), warmup=3, iters=10)
    d2h = time_cuda(torch, lambda: host.copy_(device, non_blocking=True), warmup=3, iters=10)
    up = count * 4 / statistics.median(h2d) / 1e9
    down = count * 4 / statistics.median(d2h) / 1e9
    ctx.metric("h2d_pinned", up, "GB/s", threshold=None)
    ctx.metric("d2h_pinned", down, "GB/s", threshold=None)
    return f"pinned host->device {up:.1f} GB/s, device->host {down:.1f} GB/s"


@check(
    "bench.allreduce_busbw",
    timeout_s=300,
    bench=True,
    reference="the interconnect's published rate; busbw as nccl-tests defines it",
)
def allreduce_busbw(ctx: Context) -> str:
    """Catches slow GPU-to-GPU collectives: all-reduce bus bandwidth (nccl-tests formula,
    busbw = algbw * 2(n-1)/n) with 2+ GPUs."""
    torch = _cuda(ctx)
    if torch.cuda.device_count() < 2:
        raise Skip("all-reduce bus bandwidth needs 2 or more GPUs")
    from .busbw import measure_busbw

    busbw, size = measure_busbw(torch.cuda.device_count())
    ctx.metric("allreduce_busbw", busbw, "GB/s", threshold=None)
    count = torch.cuda.device_count()
    return f"all-reduce of {size / 2**20:.0f} MiB across {count} GPUs: busbw {busbw:.0f} GB/s"
