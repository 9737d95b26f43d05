"""stress.gpu: the burn-in of new or suspect hardware (`envkit verify --stress DURATION`, the DCGM
r3 / gpu-burn class). Every GPU at once, one process each: large GEMMs into result buffers over
most of its free memory, each result compared bit for bit with the first (the same product on
the same GPU is deterministic), then known patterns written to device memory and read back.
Clocks, temperatures and throttle reasons during the burn are the watch's (gpu.clocks,
gpu.thermal judge them). Unlike gpu-burn, any mismatch fails the run."""

from __future__ import annotations

import time
from typing import Any, Dict, List, Optional

from ..core import devices
from ..core.context import Context
from ..core.registry import CheckFailed, check
from . import bench
from .distributed import in_processes

MEMORY_SHARE = 0.8  # of each GPU's free memory, for result buffers and the pattern test
GEMM_SHARE = 0.85  # of the duration; the pattern test gets the rest
PATTERNS = (0, -1, 0x55555555, -0x55555556)  # all 0, all 1, 0101..., 1010... as int32
START_BOUND_S = 180  # start-up, allocation and the report, beyond the duration itself
# A GPU's burn throughput is compared with the others' only when it is stable: wall-clock time
# of its own CUDA device (CPU devices, the stand-in's, share cores: their rates race), over at
# least this many products and seconds.
SPREAD_MIN_PRODUCTS = 20
SPREAD_MIN_S = 1.0


@check(
    "stress.gpu",
    stress=True,
    timeout_s=START_BOUND_S,
    reference="the first result of the same GEMM on the same GPU, bit for bit; patterns written "
    "to device memory read back; the node's other GPUs for throughput",
)
def burn(ctx: Context) -> str:
    """Catches a GPU that computes wrong or corrupts memory under sustained full load (silent
    data corruption), and one that cannot keep pace with the others while all burn at once."""
    import torch.multiprocessing as mp

    devices.cuda_torch(ctx, bench.NO_CUDA_SKIP)
    gpus = devices.gpu_devices(ctx)
    duration = ctx.stress_s
    size = devices.BENCH_MATMUL_SIZE["bf16"]
    burns = [(i, str(g), size, duration) for i, g in enumerate(gpus)]
    finished = in_processes(mp.get_context("spawn"), _burn_one, burns, join_s=30)
    results: List[Dict[str, Any]] = sorted(finished, key=lambda r: r["gpu"])
    if broken := [f"GPU {r['gpu']}: {r['error']}" for r in results if r["error"]]:
        raise CheckFailed("the burn-in could not run: " + "; ".join(broken))
    faults = []
    for r in results:
        for key, unit in (("mismatches", "results"), ("pattern_errors", "words")):
            ctx.metric(f"stress_{key}.gpu{r['gpu']}", float(r[key]), unit, maximum=0.0)
        if r["mismatches"] or r["pattern_errors"]:
            faults.append(
                f"GPU {r['gpu']}: {r['mismatches']} of {r['products']} products differ from the "
                f"first, {r['pattern_errors']} memory words read back wrong"
            )
    if faults:
        raise CheckFailed("; ".join(faults))
    figures = {int(r["gpu"]): float(r["tflops"]) for r in results}
    peaks: Dict[int, Optional[float]] = {gpu: bench._peak(gpus[gpu], "bf16") for gpu in figures}
    unstable = {int(r["gpu"]): why for r in results for why in [_unstable(r)] if why}
    speed = bench.record_per_gpu(
        ctx, "stress.gpu", "stress_tflops", figures, "TFLOP/s", peaks, unstable
    )
    total = sum(r["products"] for r in results)
    exact = f"{total} products exact, memory patterns exact"
    return f"{duration:.0f} s on {len(results)} GPU(s): {exact}; {speed}"


def _unstable(result: Dict[str, Any]) -> str:
    """Why one GPU's burn figure cannot be compared with the others' ("" when it can)."""
    if result.get("device") != "cuda":
        return "wall-clock on a CPU device sharing cores with the others"
    if result["products"] < SPREAD_MIN_PRODUCTS:
        return f"{result['products']} products, under {SPREAD_MIN_PRODUCTS}"
    if result.get("seconds", 0.0) < SPREAD_MIN_S:
        return f"{result.get('seconds', 0.0):.2f} s of products, under {SPREAD_MIN_S:.0f} s"
    return ""


def _burn_one(index: int, device_name: str, size: int, duration: float, queue: Any) -> None:
    """One GPU's burn, in its own process; always reports (an error as a finding)."""
    report: Dict[str, Any] = {"gpu": index, "error": None, "products": 0, "mismatches": 0}
    report.update(pattern_errors=0, tflops=0.0)
    try:
        import torch

        device = torch.device(device_name)
        report["device"] = device.type
        if device.type == "cuda":
            torch.cuda.set_device(device)
        deadline = time.monotonic() + duration * GEMM_SHARE
        report.update(_gemms(torch, device, size, deadline, index))
        report["pattern_errors"] = _patterns(torch, device, time.monotonic() + duration * 0.1)
    except Exception as exc:  # out of memory, a lost GPU: the report says so
        report["error"] = f"{type(exc).__name__}: {exc}"
    queue.put(report)


def _gemms(torch: Any, device: Any, size: int, deadline: float, seed: int) -> Dict[str, Any]:
    cuda = device.type == "cuda"
    dtype = torch.float32
    if cuda:
        dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    torch.manual_seed(seed)
    a = torch.randn(size, size, device=device, dtype=dtype)
    b = torch.randn(size, size, device=device, dtype=dtype)
    first = torch.matmul(a, b)
    each = first.element_size() * first.numel()
    room = torch.cuda.mem_get_info(device)[0] * MEMORY_SHARE if cuda else 4 * each
    buffers = [torch.empty_like(first) for _ in range(max(1, int(room // each) - 1))]
    products = mismatches = 0
    started = time.perf_counter()
    while time.monotonic() < deadline:
        for out in buffers:
            torch.matmul(a, b, out=out)
        if cuda:
            torch.cuda.synchronize(device)
        mismatches += sum(0 if torch.equal(out, first) else 1 for out in buffers)
        products += len(buffers)
    seconds = max(time.perf_counter() - started, 1e-9)
    return {
        "products": products,
        "mismatches": mismatches,
        "seconds": seconds,
        "tflops": 2 * size**3 * products / seconds / 1e12,
    }


def _patterns(torch: Any, device: Any, deadline: float) -> int:
    """Words read back different from what was written, over most of the free memory."""
    cuda = device.type == "cuda"
    free = torch.cuda.mem_get_info(device)[0] * MEMORY_SHARE if cuda else 64 << 20
    words = torch.empty(max(1024, int(free // 4)), dtype=torch.int32, device=device)
    wrong = 0
    for pattern in PATTERNS:
        words.fill_(pattern)
        wrong += int((words != pattern).sum().item())
        if time.monotonic() > deadline:
            break
    # Each word's own index: catches addressing faults that a uniform pattern cannot.
    index = torch.arange(words.numel(), dtype=torch.int32, device=device)
    words.copy_(index)
    wrong += int((words != index).sum().item())
    return wrong
