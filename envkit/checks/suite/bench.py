"""bench.*: performance on every GPU against its published peak, and every GPU against the
node's others. GPU only (CPU figures say nothing about a GPU environment). Matmul searches a few
shapes, as public searches find a GPU's achievable peak (no one shape is fastest everywhere: a
fixed 8192³ read 68 % of an H200's bf16 peak), each warmed up by time (clocks ramp, cuBLAS picks
its kernel), then timed in batches between CUDA events, random inputs, TF32 pinned."""

from __future__ import annotations

import contextlib
import functools
import statistics
import time
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

from ..core import devices
from ..core.context import Context
from ..core.registry import CheckFailed, Skip, check, ensure
from . import distributed
from .hardware import expectation, link_rates
from .skus import sku_for

WARMUP_S = 1.0
BATCHES = 10
CALLS_PER_BATCH = 10
SEARCH_S = 4.0  # per dtype and GPU: the four matmul dtypes search within 16 s a GPU
Shape = Tuple[int, int, int]  # (M, N, K) of an (M, K) by (K, N) product
# The best shapes of stas00/ml-engineering's MAMF table: H100 SXM, GH200, A100 SXM, B200.
PUBLIC_BEST = ((2048, 2048, 13312), (1024, 15360, 4096), (1024, 10240, 5120), (1792, 16128, 3072))
# The fixed square earlier runs recorded first, then those, then a smaller square.
MATMUL_SHAPES: Sequence[Shape] = ((8192, 8192, 8192), *PUBLIC_BEST, (4096, 4096, 4096))
SPREAD = 0.15  # a GPU this far below the median of the node's other GPUs fails (verify.gpu.spread)
NO_CUDA_SKIP = "benchmarks need a CUDA GPU"  # where there is none and none is required
DTYPES = {"bf16": "bfloat16", "fp16": "float16", "tf32": "float32", "fp32": "float32"}


class Search(NamedTuple):
    """A shape search on one device: its best shape, TFLOP/s per shape tried, seconds taken."""

    shape: Shape
    tried: Dict[Shape, float]
    seconds: float


def _on(torch: Any, device: Any) -> Any:
    """Make `device` current (CUDA events record on the current device)."""
    return torch.cuda.device(device) if device.type == "cuda" else contextlib.nullcontext()


def time_batches(
    torch: Any, fn: Any, *, warmup_s: float = WARMUP_S, seconds: float = 0.0, cuda: bool = True
) -> List[float]:
    """Seconds per call of `fn`, one figure per batch of CALLS_PER_BATCH back-to-back calls,
    after `warmup_s` of them: BATCHES batches, or as many as `seconds` holds (one at least)."""
    started = time.perf_counter()
    while time.perf_counter() - started < warmup_s:
        _batch(torch, fn, cuda)
    per_call: List[float] = []
    started = time.perf_counter()
    while len(per_call) < (1 if seconds else BATCHES) or time.perf_counter() - started < seconds:
        per_call.append(_batch(torch, fn, cuda) / CALLS_PER_BATCH)
    return per_call


def _batch(torch: Any, fn: Any, cuda: bool) -> float:
    """Seconds for CALLS_PER_BATCH back-to-back calls: between one CUDA-event pair on a GPU
    (the device's own time), by the wall clock on a CPU (the benchmark's CPU path)."""
    if cuda:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
    began = time.perf_counter()
    for _ in range(CALLS_PER_BATCH):
        fn()
    if not cuda:
        return time.perf_counter() - began
    end.record()
    end.synchronize()
    return float(start.elapsed_time(end)) / 1000.0


def search_matmul(
    torch: Any, device: Any, dtype: Any, shapes: Sequence[Shape] = (), budget_s: float = 0.0
) -> Search:
    """TFLOP/s of `dtype` products on DEVICE per shape of SHAPES (MATMUL_SHAPES), in order, within
    BUDGET_S (SEARCH_S): each gets an equal share of what is left, a quarter of it to warm up (the
    first WARMUP_S more, at most a quarter of the budget: clocks ramp once), and keeps its fastest
    batch. The clock is read between batches: a search ends at most two batches (a warm-up and a
    timed one) late, and a shape the budget no longer holds is not tried."""
    shapes, budget = shapes or MATMUL_SHAPES, budget_s or SEARCH_S
    began = time.perf_counter()
    tried: Dict[Shape, float] = {}
    torch.manual_seed(0)
    for index, (m, n, k) in enumerate(shapes):
        ramp = min(WARMUP_S, budget / 4) if index == 0 else 0.0
        share = (budget - ramp - (time.perf_counter() - began)) / (len(shapes) - index)
        if share <= 0:
            break
        with _on(torch, device):
            a = torch.randn(m, k, device=device, dtype=dtype)
            b = torch.randn(k, n, device=device, dtype=dtype)
            out = torch.empty(m, n, device=device, dtype=dtype)
            product = functools.partial(torch.matmul, a, b, out=out)
            warmup, cuda = ramp + share / 4, device.type == "cuda"
            times = time_batches(torch, product, warmup_s=warmup, seconds=share * 0.75, cuda=cuda)
        tried[(m, n, k)] = 2 * m * n * k / min(times) / 1e12  # other work only adds time
    return Search(max(tried, key=tried.__getitem__), tried, time.perf_counter() - began)


def record_per_gpu(
    ctx: Context,
    check_id: str,
    name: str,
    figures: Dict[int, float],
    unit: str,
    peaks: Dict[int, Optional[float]],
    unstable: Optional[Dict[int, str]] = None,
) -> str:
    """Each GPU's figure against its published peak (the check's threshold is the floor's
    fraction of it), the node's median under `name` (history follows it), and every GPU against
    the median of the others: one that far below them fails, named. The spread is judged only
    on figures stable enough to compare: UNSTABLE names the GPUs whose figure is not (too little
    work, a clock shared with the others) and why."""
    threshold = ctx.threshold(check_id)
    for index, value in figures.items():
        ctx.metric(f"{name}.gpu{index}", value, unit, peak=peaks.get(index), threshold=threshold)
    median = statistics.median(figures.values())
    peak = peaks.get(next(iter(figures)))
    ctx.metric(name, median, unit, peak=peak, threshold=threshold)
    tolerance = float(expectation(ctx, "spread", SPREAD))
    compared = figures if len(figures) > 1 and not unstable else {}
    others = {i: statistics.median(v for j, v in figures.items() if j != i) for i in compared}
    slow = [
        f"GPU {i} at {figures[i]:.1f} {unit}, {1 - figures[i] / rest:.0%} below the others"
        for i, rest in others.items()
        if figures[i] < (1 - tolerance) * rest
    ]
    if slow:
        raise CheckFailed(
            f"{name}: " + "; ".join(slow) + f" (tolerance {tolerance:.0%}, verify.gpu.spread)"
        )
    shown = f", {median / peak:.0%} of peak" if peak else " (no published peak for this GPU)"
    low, high = min(figures.values()), max(figures.values())
    spread = f" (GPUs {low:.1f}-{high:.1f})" if len(figures) > 1 else ""
    if unstable and len(figures) > 1:
        why = "; ".join(f"GPU {i}: {reason}" for i, reason in sorted(unstable.items()))
        spread += f"; spread between GPUs not judged ({why})"
    return f"median {median:.1f} {unit}{shown}{spread}"


def _matmul(ctx: Context, check_id: str, dtype_name: str) -> str:
    torch = devices.cuda_torch(ctx, NO_CUDA_SKIP)
    gpus = devices.gpu_devices(ctx)
    if dtype_name == "bf16" and not torch.cuda.is_bf16_supported():
        raise Skip("this GPU has no bf16")
    previous = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = dtype_name == "tf32"  # pinned explicitly either way
    try:
        found = [search_matmul(torch, gpu, getattr(torch, DTYPES[dtype_name])) for gpu in gpus]
    finally:
        torch.backends.cuda.matmul.allow_tf32 = previous
    figures = {index: search.tried[search.shape] for index, search in enumerate(found)}
    peaks = {index: _peak(gpu, dtype_name) for index, gpu in enumerate(gpus)}
    summary = record_per_gpu(ctx, check_id, f"matmul_{dtype_name}", figures, "TFLOP/s", peaks)
    square, seconds = MATMUL_SHAPES[0], max(search.seconds for search in found)
    fixed = statistics.median(search.tried.get(square, 0.0) for search in found)
    return (
        f"{dtype_name} on {len(gpus)} GPU(s), each at its best shape: {summary}; best (MxNxK) "
        f"{', '.join(_mnk(s.shape) for s in found)}, {min(len(s.tried) for s in found)} of "
        f"{len(MATMUL_SHAPES)} shapes in {seconds:.1f} s a GPU; fixed {_mnk(square)} {fixed:.1f}"
    )


def _mnk(shape: Shape) -> str:
    return "x".join(str(side) for side in shape)


def _peak(gpu: Any, what: str) -> Optional[float]:
    """The GPU's published figure for WHAT (one of skus.FIGURES); None where none is."""
    value = getattr(sku_for(None, devices.device_name(gpu)), what, None)
    return float(value) if value else None


# The four matmul checks: what each catches beyond a GPU far below its peak (its docstring:
# docs/checks.md's column, and `list`'s first line).
MATMULS = {
    "bf16": " (throttling, wrong clocks, a shared GPU)",
    "fp16": "",
    "tf32": " (or TF32 silently unavailable)",
    "fp32": "",
}
for _dtype, _why in MATMULS.items():
    _run = functools.partial(_matmul, check_id=f"bench.matmul_{_dtype}", dtype_name=_dtype)
    _run.__doc__ = f"Catches a GPU far below its {_dtype} matmul peak{_why}, and one slower than "
    _run.__doc__ += "the node's others."
    _reference = f"the GPU's published {_dtype} peak, dense (checks/suite/skus.json), and the "
    _reference += "node's other GPUs; a shape search timed with CUDA events"
    check(f"bench.matmul_{_dtype}", timeout_s=240, bench=True, reference=_reference)(_run)


@check(
    "bench.memory_bandwidth",
    timeout_s=240,
    bench=True,
    reference="the GPU's published memory bandwidth (checks/suite/skus.json: a floor is a "
    "fraction of it) and the node's other GPUs",
)
def memory_bandwidth(ctx: Context) -> str:
    """Catches device memory far below its bandwidth (bytes read + written, buffer >> L2) on
    any GPU, and one GPU's memory slower than the others'."""
    torch = devices.cuda_torch(ctx, NO_CUDA_SKIP)
    gpus = devices.gpu_devices(ctx)
    copies = [_time_copy(torch, gpu, index) for index, gpu in enumerate(gpus)]
    # the fastest batch, as nvbandwidth and BabelStream report
    figures = {index: moved / min(times) / 1e9 for index, (moved, times) in enumerate(copies)}
    peaks = {index: _peak(gpu, "memory_gbs") for index, gpu in enumerate(gpus)}
    summary = record_per_gpu(
        ctx, "bench.memory_bandwidth", "memory_bandwidth", figures, "GB/s", peaks
    )
    return f"device-to-device copy on {len(figures)} GPU(s), best of {BATCHES}: {summary}"


def _time_copy(torch: Any, gpu: Any, index: int) -> Any:
    """(bytes moved per copy: read + write, seconds per copy) for one GPU's device memory."""
    with _on(torch, gpu):
        count = devices.BENCH_COPY_BYTES // 4
        free = torch.cuda.mem_get_info(gpu)[0] if gpu.type == "cuda" else 3 * count * 4
        count = min(count, free // 16)
        src = torch.randn(count, device=gpu)
        dst = torch.empty_like(src)
        times = time_batches(torch, lambda: dst.copy_(src))
        ensure(torch.equal(dst[:1024], src[:1024]), f"the copy on GPU {index} is wrong")
    return 2 * count * 4, times


@check(
    "bench.host_device",
    timeout_s=180,
    bench=True,
    reference="each GPU's own PCIe link: its generation x width rate (NVML), one direction; and "
    "the node's other GPUs",
)
def host_device(ctx: Context) -> str:
    """Catches a slow host link on any GPU (PCIe downgraded, pageable memory, a bad riser):
    pinned host-to-device and back, against the rate its own link can carry."""
    torch = devices.cuda_torch(ctx, NO_CUDA_SKIP)
    gpus = devices.gpu_devices(ctx)
    rates = link_rates(torch, len(gpus), pcie_only=True)
    count = devices.BENCH_LINK_BYTES // 4
    links = [_time_host_link(torch, gpu, count) for gpu in gpus]
    up = {index: count * 4 / statistics.median(h2d) / 1e9 for index, (h2d, _) in enumerate(links)}
    down = {index: count * 4 / statistics.median(d2h) / 1e9 for index, (_, d2h) in enumerate(links)}
    first = record_per_gpu(ctx, "bench.host_device", "h2d_pinned", up, "GB/s", rates)
    second = record_per_gpu(ctx, "bench.host_device", "d2h_pinned", down, "GB/s", rates)
    return _judged(rates, f"pinned host->device {first}; device->host {second}")


def _judged(rates: Dict[int, Optional[float]], measured: str) -> str:
    """MEASURED, where every link rate was read; else a Skip naming the GPUs (never a pass: the
    figure was not judged), its metrics kept in the report."""
    if unknown := [f"GPU {index}" for index, rate in rates.items() if not rate]:
        raise Skip(f"{measured}; not judged: no link rate for {', '.join(unknown)} (NVML)")
    return measured


def _time_host_link(torch: Any, gpu: Any, count: int) -> Any:
    host = torch.randn(count).pin_memory()
    with _on(torch, gpu):
        device = torch.empty(count, device=gpu)
        h2d = time_batches(torch, lambda: device.copy_(host, non_blocking=True), warmup_s=0.3)
        d2h = time_batches(torch, lambda: host.copy_(device, non_blocking=True), warmup_s=0.3)
    return h2d, d2h


@check(
    "bench.allreduce_busbw",
    timeout_s=300,
    bench=True,
    reference="the interconnect's rate: each GPU's active NVLinks, else its PCIe link (NVML); "
    "busbw as nccl-tests defines it",
)
def allreduce_busbw(ctx: Context) -> str:
    """Catches slow GPU-to-GPU collectives: all-reduce bus bandwidth (nccl-tests formula,
    busbw = algbw * 2(n-1)/n) with 2+ GPUs, against the slowest GPU's interconnect, named."""
    torch = devices.cuda_torch(ctx, NO_CUDA_SKIP)
    gpus = devices.gpu_devices(ctx, minimum=2)
    rates = link_rates(torch, len(gpus), pcie_only=False)
    # NCCL across GPUs; gloo where the devices are the CPU (the tests' fake GPUs)
    backend = "nccl" if gpus[0].type == "cuda" else "gloo"
    seconds, size = distributed.measure_allreduce(len(gpus), backend)
    busbw = distributed.busbw_gbs(size, seconds, len(gpus))
    slowest = min(rates, key=lambda index: rates[index] or 0.0)  # an unknown rate first
    threshold = ctx.threshold("bench.allreduce_busbw")
    ctx.metric("allreduce_busbw", busbw, "GB/s", peak=rates[slowest], threshold=threshold)
    measured = (
        f"{backend} all-reduce of {size / 2**20:.0f} MiB across {len(gpus)} GPUs: algbw "
        f"{size / seconds / 1e9:.4g} GB/s, busbw {busbw:.4g} GB/s (x 2(n-1)/n, nccl-tests)"
    )
    _judged(rates, measured)
    rate, floor = float(rates[slowest] or 0.0), threshold or 0.0
    against = f"{busbw / rate:.0%} of the slowest link, GPU {slowest}'s {rate:.3g} GB/s each way"
    ensure(busbw >= floor * rate, f"{measured}: {against}, below the floor of {floor:.0%}")
    return f"{measured}; {against}"
