"""bench.p2p: every GPU-to-GPU pair of a multi-GPU node, both ways: a peer copy compared with
its source (DCGM's diag catches broken P2P the same way: data that arrives wrong), and its
bandwidth against the link between the two (their NVLinks, else PCIe), as Azure's health checks
time a copy per pair. One slow or corrupting pair is named; a node-wide figure would hide it."""

from __future__ import annotations

import statistics
from typing import Any, Dict, List, Tuple

from ..core import devices
from ..core.context import Context
from ..core.registry import CheckFailed, check
from . import bench
from .hardware import link_rates

WARMUP_S = 0.1  # per pair: 8 GPUs have 56 ordered pairs


@check(
    "bench.p2p",
    timeout_s=300,
    bench=True,
    reference="each pair's link (NVML: the pair's NVLinks, else PCIe) and the copy's own "
    "source, byte for byte (DCGM's P2P data check; Azure's per-pair copy bandwidth)",
)
def p2p(ctx: Context) -> str:
    """Catches broken GPU-to-GPU paths: a copy between two GPUs that arrives wrong, and a pair
    far slower than its link (a degraded NVLink, P2P falling back through the host)."""
    torch = devices.cuda_torch(ctx, bench.NO_CUDA_SKIP)
    gpus = devices.gpu_devices(ctx, minimum=2)
    rates = link_rates(torch, len(gpus), pcie_only=False)
    threshold = ctx.threshold("bench.p2p")
    count = devices.BENCH_LINK_BYTES // 4
    wrong: List[str] = []
    slow: List[str] = []
    figures: Dict[Tuple[int, int], float] = {}
    for source, target in ((i, j) for i in range(len(gpus)) for j in range(len(gpus)) if i != j):
        seconds, exact = _copy(torch, gpus[source], gpus[target], count, source)
        if not exact:
            wrong.append(f"GPU {source} -> GPU {target}")
            continue
        figure = count * 4 / seconds / 1e9
        figures[(source, target)] = figure
        # the slower end's rate (a copy cannot outrun either GPU's links); None where unknown
        link = min(rates.get(source) or 0.0, rates.get(target) or 0.0) or None
        ctx.metric(
            f"p2p_gbs.gpu{source}_gpu{target}", figure, "GB/s", peak=link, threshold=threshold
        )
        if link and threshold is not None and figure < threshold * link:
            slow.append(f"GPU {source} -> GPU {target} at {figure:.0f} GB/s ({figure / link:.0%})")
    if wrong:
        raise CheckFailed("peer copies arrived wrong: " + ", ".join(wrong))
    if slow:
        raise CheckFailed(f"pairs below {threshold:.0%} of their link: " + "; ".join(slow))
    median = statistics.median(figures.values())
    ctx.metric("p2p_gbs", median, "GB/s")
    source, target = min(figures, key=figures.__getitem__)
    measured = (
        f"{len(figures)} ordered pairs exact; median {median:.0f} GB/s, the slowest pair GPU "
        f"{source} -> GPU {target} at {figures[(source, target)]:.0f} GB/s"
    )
    return bench._judged(rates, measured)


def _copy(torch: Any, source: Any, target: Any, count: int, seed: int) -> Tuple[float, bool]:
    """Seconds per copy of COUNT floats SOURCE -> TARGET, and whether the copy is exact."""
    values = torch.randn(count, generator=torch.Generator().manual_seed(seed))
    with bench._on(torch, source):
        src = values.to(source)
        dst = torch.empty(count, device=target)
        times = bench.time_batches(torch, lambda: dst.copy_(src), warmup_s=WARMUP_S)
        dst.copy_(src)
        exact = bool(torch.equal(dst.cpu(), values))
    return statistics.median(times), exact
