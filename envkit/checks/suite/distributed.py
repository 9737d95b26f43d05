"""Distributed pieces with one definition each, for multigpu.* (ranks spawned on this machine)
and the cross-node program (ranks under torchrun): a free port, the exact all-reduce, DDP steps
whose weights must agree on every rank, and bus bandwidth as nccl-tests defines it."""

from __future__ import annotations

import socket
import time
from datetime import timedelta
from typing import Any, List, Optional, Tuple

from ..core.registry import CheckFailed

# bench.allreduce_busbw's bytes and timed all-reduces: gloo's (the tests' CPU ranks) smaller.
SIZES = {"nccl": (256 << 20, 20), "gloo": (16 << 20, 5)}
WEIGHTS_ATOL = 1e-6  # NVIDIA ai-cloud-validation's rule for weights after DDP steps


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def in_processes(
    mp_context: Any, target: Any, argsets: List[Tuple[Any, ...]], join_s: float
) -> List[Any]:
    """target(*args, queue) in a process per entry of ARGSETS: what each put on the queue (in
    the order they came), once every process was joined (at most JOIN_S each). A process that
    ended without answering (killed by a signal, a fork gone wrong) is said once every process
    has ended, instead of the parent waiting on the queue until the check's timeout."""
    queue = mp_context.SimpleQueue()
    procs = [mp_context.Process(target=target, args=(*args, queue)) for args in argsets]
    for proc in procs:
        proc.start()
    results: List[Any] = []
    while len(results) < len(procs):
        if not queue.empty():
            results.append(queue.get())
        elif all(proc.exitcode is not None for proc in procs) and queue.empty():  # some died
            codes = [f"rank {n} exited with code {p.exitcode}" for n, p in enumerate(procs)]
            missing = len(procs) - len(results)
            results.append(f"{missing} rank(s) ended before they answered ({', '.join(codes)})")
            break
        else:
            time.sleep(0.05)
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
    """Seconds per all-reduce of `buffer` after five untimed (connections open, NCCL settles)."""
    cuda = buffer.device.type == "cuda"
    for _ in range(5):
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


def on_local_ranks(work: Any, world: int, backend: str, method: str, join_s: float) -> List[Any]:
    """work(torch, dist, device, rank, world) in a process per rank on this machine (NCCL: GPU
    `rank`; gloo: the CPU), started by METHOD: each rank's result; a rank that raised fails."""
    import torch.multiprocessing as mp

    port = free_port()  # one for all ranks: rank 0 listens on it
    ranks = [(work, rank, world, backend, port) for rank in range(world)]
    results = in_processes(mp.get_context(method), _rank_main, ranks, join_s)
    if errors := [result for result in results if isinstance(result, str)]:
        raise CheckFailed(f"{backend} ranks failed: " + "; ".join(errors))
    return results


def _rank_main(work: Any, rank: int, world: int, backend: str, port: int, queue: Any) -> None:
    import torch
    import torch.distributed as dist

    try:
        if backend == "nccl":
            torch.cuda.set_device(rank)
        url, wait = f"tcp://127.0.0.1:{port}", timedelta(seconds=120)  # rank 0 listens on it
        dist.init_process_group(backend, init_method=url, rank=rank, world_size=world, timeout=wait)
        device = torch.device("cuda", rank) if backend == "nccl" else torch.device("cpu")
        queue.put(work(torch, dist, device, rank, world))
        dist.destroy_process_group()
    except Exception as exc:  # the rank says why (on_local_ranks fails on it)
        queue.put(f"rank {rank}: {type(exc).__name__}: {exc}")


def _time_allreduce_rank(torch: Any, dist: Any, device: Any, rank: int, world: int) -> float:
    size, iters = SIZES["nccl" if device.type == "cuda" else "gloo"]
    return time_allreduce(torch, dist, torch.ones(size // 4, device=device), iters)


def measure_allreduce(world: int, backend: str) -> Tuple[float, int]:
    """(seconds per all-reduce on the slowest rank, message bytes) across `world` ranks on this
    machine, one per GPU (NCCL) or on the CPU (gloo)."""
    slowest = max(on_local_ranks(_time_allreduce_rank, world, backend, "spawn", join_s=60))
    return slowest, SIZES[backend][0]
