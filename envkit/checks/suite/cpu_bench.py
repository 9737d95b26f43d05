"""bench.cpu_*: the host's own throughput, on every machine. No published peak applies to an
arbitrary CPU, so these figures are judged against the same target's earlier runs (envkit
history's baselines), which is what finds a host or image that got slower. The figure is the
best of the timed calls: other load on a shared host only ever adds time, so the fastest call is
the steadiest measure of what the host can do (a slowdown in the op itself slows every call).
Each also checks that the op it timed computed the right thing: a fast wrong answer is not a
figure."""

from __future__ import annotations

import math
import time
from typing import Any, Callable, List, Tuple

from ..core.context import Context
from ..core.registry import check, ensure

MATMUL_SIZE = 256  # 33.5 MFLOP a product: milliseconds on any CPU, so the check stays short
COPY_BYTES = 64 * 1024 * 1024  # well beyond any CPU cache
SAMPLED_ENTRIES = [(0, 0), (17, 203), (128, 5), (255, 255), (77, 140), (200, 31)]


# On a shared or virtual host the CPU runs slow in spells (steal, a busy sibling thread) that
# can outlast any window a check can afford: measured here, the best matmul of a 1.5 s window
# read 2.7 GFLOP/s in 1 of 20 healthy runs against 4.9-5.2 in the rest. So each timed call is
# paired with a reference call of plain Python arithmetic, interleaved, and the figure judged
# against history is the ratio of the two: a slow spell slows both, a slower op only the op.
WARMUP_S = 0.3
WINDOW_S = 1.0


def _reference_work() -> int:
    """A fixed piece of plain-Python arithmetic: no torch, no BLAS, no memory traffic."""
    total = 0
    for i in range(20_000):
        total += i * i % 7
    return total


def time_cpu(fn: Callable[[], Any], *, warmup: int, iters: int) -> Tuple[float, float]:
    """(best seconds per call of fn, best seconds per reference call), the two interleaved:
    at least `iters` pairs and WINDOW_S of them, after `warmup` calls and WARMUP_S."""
    began = time.perf_counter()
    done = 0
    while done < warmup or time.perf_counter() - began < WARMUP_S:
        fn()
        done += 1
    best_op = best_ref = float("inf")
    pairs = 0
    began = time.perf_counter()
    while pairs < iters or time.perf_counter() - began < WINDOW_S:
        start = time.perf_counter()
        fn()
        middle = time.perf_counter()
        _reference_work()
        end = time.perf_counter()
        best_op, best_ref = min(best_op, middle - start), min(best_ref, end - middle)
        pairs += 1
    return best_op, best_ref


@check(
    "bench.cpu_matmul",
    timeout_s=60,
    bench=True,
    reference="entries summed in plain Python (no BLAS); its speed against interleaved plain "
    "Python arithmetic, judged against this target's history",
)
def cpu_matmul(ctx: Context) -> str:
    """Catches a CPU matmul that got slower (against history) or computes wrong: fp32 GFLOP/s."""
    import torch

    torch.manual_seed(0)
    a = torch.randn(MATMUL_SIZE, MATMUL_SIZE)
    b = torch.randn(MATMUL_SIZE, MATMUL_SIZE)
    result: List[Any] = [None]

    def product() -> None:
        result[0] = a @ b

    best, reference = time_cpu(product, warmup=3, iters=20)
    # Entries checked with plain Python sums: no BLAS, so a library wrong for every dtype
    # cannot agree with itself here.
    rows, cols = a.tolist(), b.t().tolist()
    worst = max(
        abs(result[0][i, j].item() - math.fsum(x * y for x, y in zip(rows[i], cols[j])))
        for i, j in SAMPLED_ENTRIES
    )
    ensure(worst < 1e-3, f"the timed fp32 product is off by {worst:.3g} from plain Python sums")
    gflops = 2 * MATMUL_SIZE**3 / best / 1e9
    ctx.metric("cpu_matmul_fp32", gflops, "GFLOP/s")
    ctx.metric("cpu_matmul_vs_python", reference / best, "x")
    threads = torch.get_num_threads()
    plural = "s" if threads != 1 else ""
    return f"{MATMUL_SIZE}³ fp32, {threads} thread{plural}: {gflops:.1f} GFLOP/s"


@check(
    "bench.cpu_memcpy",
    timeout_s=60,
    bench=True,
    reference="the source tensor itself, compared after the copy; its speed against "
    "interleaved plain Python arithmetic, judged against history",
)
def cpu_memcpy(ctx: Context) -> str:
    """Catches host memory copies that got slower (against history) or corrupt: GB/s moved."""
    import torch

    src = torch.arange(COPY_BYTES // 4, dtype=torch.float32)
    dst = torch.empty_like(src)
    best, reference = time_cpu(lambda: dst.copy_(src), warmup=2, iters=15)
    ensure(bool(torch.equal(dst, src)), "the copy differs from its source")
    gbs = 2 * COPY_BYTES / best / 1e9  # read + write
    ctx.metric("cpu_memcpy", gbs, "GB/s")
    ctx.metric("cpu_memcpy_vs_python", reference / best, "x")
    return f"{COPY_BYTES // 2**20} MiB copied: {gbs:.1f} GB/s"
