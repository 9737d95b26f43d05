"""multigpu.cross_node: one all-reduce and a few DDP steps across every process of a multi-node
job, so a cluster run checks the interconnect and not only each node. It runs under torchrun
(one process per GPU, or one per CPU-only node with gloo), rendezvous from the scheduler's
environment; local rank 0 of each node writes that node's result into the run's folder.

    torchrun --nnodes N --nproc-per-node G ... bundle.zip collective --out-dir DIR

Standard library and torch only, like the rest of the suite (Python 3.8 too)."""

from __future__ import annotations

import json
import os
import time
import traceback
from datetime import timedelta
from typing import Any, List, Tuple

from ..core.context import Context
from ..core.contract import Metric, Status, check_result
from ..suite.distributed import busbw_gbs, ddp_weights_agree, exact_allreduce, time_allreduce
from .health import node_name

CHECK_ID = "multigpu.cross_node"
STEPS = 3
TIMED = 5  # timed all-reduces for the bus bandwidth figure


def _measure(torch: Any, dist: Any) -> Tuple[Status, str, List[Metric]]:
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local = int(os.environ.get("LOCAL_RANK", "0"))
    nodes = int(os.environ.get("GROUP_WORLD_SIZE") or os.environ.get("SLURM_NNODES") or 0)
    if torch.cuda.is_available():
        torch.cuda.set_device(local)
        device, backend = torch.device("cuda", local), "nccl"
    else:
        device, backend = torch.device("cpu"), "gloo"
    dist.init_process_group(backend, timeout=timedelta(seconds=120))
    exact = exact_allreduce(torch, dist, device, rank, world)
    ids = [local] if device.type == "cuda" else None
    _, equal = ddp_weights_agree(torch, dist, device, rank, ids, STEPS)
    size = (64 << 20) if device.type == "cuda" else (4 << 20)
    seconds = time_allreduce(torch, dist, torch.ones(size // 4, device=device), TIMED)
    busbw = busbw_gbs(size, seconds, world)
    dist.barrier()
    dist.destroy_process_group()
    metric = Context({}).metric("cross_node_busbw", round(busbw, 3), "GB/s")
    where = f"{world} processes on {nodes or '?'} node{'' if nodes == 1 else 's'} over {backend}"
    if not exact:
        return "fail", f"all-reduce across {where} gave a wrong sum", [metric]
    if not equal:
        return "fail", f"DDP weights differ between ranks after {STEPS} steps ({where})", [metric]
    return (
        "pass",
        f"all-reduce exact and DDP weights equal across {where}; bus bandwidth {busbw:.2f} GB/s",
        [metric],
    )


def main(out_dir: str) -> int:
    started = time.perf_counter()
    status: Status
    try:
        import torch
        import torch.distributed as dist

        status, message, metrics = _measure(torch, dist)
    except Exception as exc:  # the collective itself broke: that is the finding
        status, metrics = "error", []
        message = f"{type(exc).__name__}: {exc}\n" + "".join(
            traceback.format_tb(exc.__traceback__)[-2:]
        )
    if os.environ.get("LOCAL_RANK", "0") == "0":  # one result per node
        node = node_name(None)
        result = check_result(
            CHECK_ID, status, round(time.perf_counter() - started, 3), message, metrics
        )
        path = os.path.join(out_dir, node + ".collective.json")
        with open(path + ".tmp", "w") as handle:
            json.dump(result, handle)
        os.replace(path + ".tmp", path)
    return 0 if status == "pass" else 1
