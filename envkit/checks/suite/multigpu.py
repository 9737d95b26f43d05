"""multigpu.*: peer access, DataParallel, and DDP (NCCL across GPUs; gloo on CPU or one GPU)."""

from __future__ import annotations

from typing import Any, Dict

from ..core import devices
from ..core.context import Context
from ..core.registry import check, ensure
from .distributed import ddp_weights_agree, exact_allreduce, on_local_ranks

DDP_STEPS = 3


@check(
    "multigpu.peer_access",
    reference="the driver's peer-access answer; a copy compared with its source",
)
def peer_access(ctx: Context) -> str:
    """Catches GPUs that cannot reach each other directly (P2P off: slow collectives)."""
    import torch

    gpus = devices.gpu_devices(ctx, minimum=2)
    count = len(gpus)
    matrix = [
        [torch.cuda.can_device_access_peer(i, j) if i != j else True for j in range(count)]
        for i in range(count)
    ]
    rows = " ".join("".join("1" if ok else "0" for ok in row) for row in matrix)
    x = torch.arange(1 << 16, device=gpus[0], dtype=torch.float32)
    for other in gpus[1:]:
        ensure(torch.equal(x.to(other).cpu(), x.cpu()), f"copy {gpus[0]} -> {other} corrupted data")
    return f"peer access matrix {rows}; copies between devices exact"


@check(
    "multigpu.data_parallel",
    timeout_s=120,
    reference="the same model on one device (DataParallel must not change the output)",
)
def data_parallel(ctx: Context) -> str:
    """Catches DataParallel giving different outputs than one device."""
    import torch

    gpus = devices.gpu_devices(ctx, minimum=2)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8))
    model = model.to(gpus[0])
    data = torch.randn(64, 32, device=gpus[0])
    single = model(data)
    parallel = torch.nn.DataParallel(model, device_ids=[g.index for g in gpus])(data)
    ensure(torch.allclose(single, parallel, rtol=1e-4, atol=1e-5), "DataParallel output differs")
    return f"DataParallel over {len(gpus)} GPUs matches one device"


def _ddp_rank(torch: Any, dist: Any, device: Any, rank: int, world: int) -> Dict[str, bool]:
    """One rank's findings, by name (they cross a process boundary as a pickle)."""
    exact = exact_allreduce(torch, dist, device, rank, world)
    ids = [rank] if device.type == "cuda" else None
    grads_nonzero, same = ddp_weights_agree(torch, dist, device, rank, ids, DDP_STEPS)
    return {"exact": exact, "weights_equal": same, "grads_nonzero": grads_nonzero}


@check(
    "multigpu.ddp",
    timeout_s=180,
    reference="the exact all-reduce answer n(n+1)/2, and the weights of every rank compared",
)
def ddp(ctx: Context) -> str:
    """Catches a broken distributed stack: all-reduce must be exact and DDP weights equal on every
    rank after a few steps (NCCL across GPUs; gloo with 2 processes on CPU or one GPU). A hung
    collective is stopped by the runner's timeout and reported with a hint."""
    import torch
    import torch.distributed as dist

    gpus = ctx.gpu_count()
    want = ctx.expected_gpus or 0
    ensure(gpus >= want or want < 2, f"{gpus} GPU(s) visible, {want} expected for DDP")
    backend = "nccl" if gpus >= 2 and dist.is_nccl_available() else "gloo"
    ensure(
        dist.is_available() and (backend == "nccl" or dist.is_gloo_available()),
        "torch.distributed is not available in this build",
    )
    world = gpus if backend == "nccl" else 2
    # fork is cheap and fine while CUDA is untouched; NCCL ranks need fresh (spawned) processes,
    # and so does QEMU's emulation, where a rank forked from the threaded worker hung for good.
    fresh = backend == "nccl" or torch.cuda.is_initialized() or ctx.config.get("emulated")
    method = "spawn" if fresh else "fork"
    results = on_local_ranks(_ddp_rank, world, backend, method, join_s=30)
    ensure(all(r["exact"] for r in results), f"{backend} all-reduce was not exact")
    ensure(all(r["grads_nonzero"] for r in results), "DDP produced zero gradients")
    ensure(
        all(r["weights_equal"] for r in results),
        f"DDP weights differ across ranks after {DDP_STEPS} steps",
    )
    return f"{backend}, {world} processes: all-reduce exact, weights equal after {DDP_STEPS} steps"
