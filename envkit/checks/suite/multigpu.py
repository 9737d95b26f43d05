"""multigpu.*: peer access, DataParallel, and DDP (NCCL across GPUs; gloo on CPU or one GPU)."""

from __future__ import annotations

import os
from typing import Any, Dict, Optional

from ..core import devices
from ..core.context import Context
from ..core.registry import check, ensure
from .distributed import ddp_weights_agree, exact_allreduce, free_port, in_processes, join_local

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
    count = len(gpus)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8))
    model = model.to(gpus[0])
    data = torch.randn(64, 32, device=gpus[0])
    single = model(data)
    parallel = torch.nn.DataParallel(model, device_ids=[g.index for g in gpus])(data)
    ensure(torch.allclose(single, parallel, rtol=1e-4, atol=1e-5), "DataParallel output differs")
    return f"DataParallel over {count} GPUs matches one device"


def _rank_result(
    rank: int, exact: bool, weights_equal: bool, grads_nonzero: bool, error: Optional[str]
) -> Dict[str, Any]:
    """What one DDP rank reports back, by name (it crosses a process boundary as a pickle)."""
    return {
        "rank": rank,
        "exact": exact,
        "weights_equal": weights_equal,
        "grads_nonzero": grads_nonzero,
        "error": error,
    }


def _ddp_rank(rank: int, world: int, backend: str, port: int, queue: Any) -> None:
    import torch
    import torch.distributed as dist

    try:
        device = torch.device("cuda", rank) if backend == "nccl" else torch.device("cpu")
        if backend == "nccl":
            torch.cuda.set_device(rank)
        join_local(dist, backend, port, rank, world, timeout_s=60)
        exact = exact_allreduce(torch, dist, device, rank, world)
        ids = [rank] if backend == "nccl" else None
        grads_nonzero, same = ddp_weights_agree(torch, dist, device, rank, ids, DDP_STEPS)
        queue.put(_rank_result(rank, exact, same, grads_nonzero, None))
        dist.destroy_process_group()
    except Exception as exc:
        queue.put(_rank_result(rank, False, False, False, f"{type(exc).__name__}: {exc}"))


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
    import torch.multiprocessing as mp

    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    want = ctx.expected_gpus or 0
    ensure(gpus >= want or want < 2, f"{gpus} GPU(s) visible, {want} expected for DDP")
    backend = "nccl" if gpus >= 2 and dist.is_nccl_available() else "gloo"
    ensure(
        dist.is_available() and (backend == "nccl" or dist.is_gloo_available()),
        "torch.distributed is not available in this build",
    )
    world = gpus if backend == "nccl" else 2
    # fork is cheap and fine while CUDA is untouched; NCCL ranks need fresh (spawned) processes.
    method = "spawn" if backend == "nccl" or torch.cuda.is_initialized() else "fork"
    port = free_port()
    ranks = [(rank, world, backend, port) for rank in range(world)]
    results = in_processes(mp.get_context(method), _ddp_rank, ranks, join_s=30)
    errors = [f"rank {r['rank']}: {r['error']}" for r in results if r["error"]]
    ensure(not errors, "; ".join(errors))
    ensure(all(r["exact"] for r in results), f"{backend} all-reduce was not exact")
    ensure(all(r["grads_nonzero"] for r in results), "DDP produced zero gradients")
    ensure(
        all(r["weights_equal"] for r in results),
        f"DDP weights differ across ranks after {DDP_STEPS} steps",
    )
    os.environ.pop("MASTER_PORT", None)
    return f"{backend}, {world} processes: all-reduce exact, weights equal after {DDP_STEPS} steps"
