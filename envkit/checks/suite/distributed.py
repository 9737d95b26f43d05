"""Distributed pieces with one definition each, for multigpu.* (ranks spawned on this machine)
and the cross-node program (ranks under torchrun): a free port, the exact all-reduce, DDP steps
whose weights must agree on every rank, and bus bandwidth as nccl-tests defines it."""

from __future__ import annotations

import socket
import time
from datetime import timedelta
from typing import Any, List, Optional, Tuple

SIZE_BYTES = 256 * 1024 * 1024  # bench.allreduce_busbw's message
WEIGHTS_ATOL = 1e-6  # NVIDIA ai-cloud-validation's rule for weights after DDP steps


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def join_local(dist: Any, backend: str, port: int, rank: int, world: int, timeout_s: int) -> None:
    """Join this machine's process group of WORLD ranks, rank 0 listening on PORT."""
    address, wait = f"tcp://127.0.0.1:{port}", timedelta(seconds=timeout_s)
    dist.init_process_group(backend, init_method=address, rank=rank, world_size=world, timeout=wait)


def in_processes(
    mp_context: Any, target: Any, argsets: List[Tuple[Any, ...]], join_s: float
) -> List[Any]:
    """target(*args, queue) in a process per entry of ARGSETS: what each put on the queue (in
    the order they came), once every process was joined (at most JOIN_S each)."""
    queue = mp_context.SimpleQueue()
    procs = [mp_context.Process(target=target, args=(*args, queue)) for args in argsets]
    for proc in procs:
        proc.start()
    results = [queue.get() for _ in procs]
    for proc in procs:
        proc.join(timeout=join_s)
    return results


def busbw_gbs(size_bytes: float, seconds: float, world: int) -> float:
    """All-reduce bus bandwidth in GB/s: algbw = S/t, busbw = algbw * 2(n-1)/n (nccl-tests'
    doc/PERFORMANCE.md), so figures compare across world sizes."""
    return size_bytes / seconds / 1e9 * 2 * (world - 1) / world


def exact_allreduce(torch: Any, dist: Any, device: Any, rank: int, world: int) -> bool:
    """Every rank contributes rank+1; the sum must be n(n+1)/2 exactly, everywhere."""
    t = torch.full((4096,), float(rank + 1), device=device)
    dist.all_reduce(t)
    return bool((t == world * (world + 1) / 2).all().item())


def ddp_weights_agree(
    torch: Any, dist: Any, device: Any, rank: int, device_ids: Optional[List[int]], steps: int
) -> Tuple[bool, bool]:
    """(gradients non-zero on every step, weights equal on every rank) after `steps` DDP steps
    on different data per rank: only the all-reduce of gradients can keep the weights equal."""
    torch.manual_seed(0)  # the same initial weights everywhere; DDP broadcasts them anyway
    model = torch.nn.Linear(16, 4).to(device)
    ddp = torch.nn.parallel.DistributedDataParallel(model, device_ids=device_ids)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.1)
    torch.manual_seed(100 + rank)  # different data on every rank
    grads_nonzero = True
    for _ in range(steps):
        optimizer.zero_grad()
        ddp(torch.randn(8, 16, device=device)).pow(2).mean().backward()
        grads_nonzero = grads_nonzero and all(
            p.grad.abs().sum().item() > 0 for p in model.parameters()
        )
        optimizer.step()
    flat = torch.cat([p.detach().flatten() for p in model.parameters()])
    low, high = flat.clone(), flat.clone()
    dist.all_reduce(low, op=dist.ReduceOp.MIN)
    dist.all_reduce(high, op=dist.ReduceOp.MAX)
    return grads_nonzero, bool((high - low).abs().max().item() <= WEIGHTS_ATOL)


def time_allreduce(torch: Any, dist: Any, buffer: Any, iters: int) -> float:
    """Seconds per all-reduce of `buffer`, after one warm-up (connections open on first use)."""
    cuda = buffer.device.type == "cuda"
    dist.all_reduce(buffer)
    if cuda:
        torch.cuda.synchronize()
    dist.barrier()
    started = time.perf_counter()
    for _ in range(iters):
        dist.all_reduce(buffer)
    if cuda:
        torch.cuda.synchronize()
    return (time.perf_counter() - started) / iters


def _busbw_rank(rank: int, world: int, port: int, queue: Any) -> None:
    import torch
    import torch.distributed as dist

    torch.cuda.set_device(rank)
    join_local(dist, "nccl", port, rank, world, timeout_s=120)
    data = torch.ones(SIZE_BYTES // 4, device="cuda")
    for _ in range(4):  # beyond time_allreduce's own warm-up: NCCL settles its channels
        dist.all_reduce(data)
    seconds = time_allreduce(torch, dist, data, iters=20)
    queue.put(busbw_gbs(SIZE_BYTES, seconds, world))
    dist.destroy_process_group()


def measure_busbw(world: int) -> Tuple[float, int]:
    """The slowest rank's bus bandwidth (GB/s) for SIZE_BYTES across `world` local GPUs."""
    import torch.multiprocessing as mp

    port = free_port()  # one for all ranks: rank 0 listens on it
    ranks = [(rank, world, port) for rank in range(world)]
    values = in_processes(mp.get_context("spawn"), _busbw_rank, ranks, join_s=60)
    return min(values), SIZE_BYTES
