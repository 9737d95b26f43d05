"""All-reduce bus bandwidth across local GPUs, measured as nccl-tests does."""

from __future__ import annotations

import socket
import time
from datetime import timedelta
from typing import Any

SIZE_BYTES = 256 * 1024 * 1024


def _rank(rank: int, world: int, port: int, queue: Any) -> None:
    import torch
    import torch.distributed as dist

    torch.cuda.set_device(rank)
    dist.init_process_group(
        "nccl",
        init_method=f"tcp://127.0.0.1:{port}",
        rank=rank,
        world_size=world,
        timeout=timedelta(seconds=120),
    )
    data = torch.ones(SIZE_BYTES // 4, device="cuda")
    for _ in range(5):
        dist.all_reduce(data)
    torch.cuda.synchronize()
    dist.barrier()
    iters = 20
    start = time.perf_counter()
    for _ in range(iters):
        dist.all_reduce(data)
    torch.cuda.synchronize()
    seconds = (time.perf_counter() - start) / iters
    algbw = SIZE_BYTES / seconds / 1e9
    queue.put(algbw * 2 * (world - 1) / world)
    dist.destroy_process_group()


def measure_busbw(world: int) -> tuple[float, int]:
    import torch.multiprocessing as mp

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    ctx = mp.get_context("spawn")
    queue = ctx.SimpleQueue()
    procs = [ctx.Process(target=_rank, args=(r, world, port, queue)) for r in range(world)]
    for proc in procs:
        proc.start()
    values = [queue.get() for _ in range(world)]
    for proc in procs:
        proc.join(timeout=60)
    return min(values), SIZE_BYTES
