"""The report's shape (docs/architecture.md, "Report schema"), as TypedDicts: the checks produce
it and envkit's verify and report modules read it, so both sides are type-checked against one
definition. Standard library only, like the rest of this package (it runs on Python 3.8 too)."""

from __future__ import annotations

import re
from typing import Any, Dict, List, Literal, Optional, Tuple, TypedDict

# The closed sets of the contract, named once: a check's status, when a check runs (in turn, or
# after the run from what the GPU watch saw), and a target's verdict in the combined report.
Status = Literal["pass", "fail", "skip", "error"]
STATUSES: Tuple[Status, ...] = ("pass", "fail", "skip", "error")
Phase = Literal["run", "after"]
TargetState = Literal["passed", "failed", "unreachable"]

# "pass" is a keyword, so the counts are spelled the functional way.
Counts = TypedDict("Counts", {"pass": int, "fail": int, "skip": int, "error": int})


class Metric(TypedDict):
    """A figure and the bounds it is judged by: `threshold` on its fraction of `peak`, or
    `minimum`/`maximum` on the value itself (bytes of /dev/shm, an ECC count, a temperature).
    A counter ("count" unit) may have none: history reports any rise of it."""

    name: str
    value: float
    unit: str
    peak: Optional[float]
    fraction_of_peak: Optional[float]
    threshold: Optional[float]  # the minimum acceptable fraction of peak
    minimum: Optional[float]  # the smallest acceptable value
    maximum: Optional[float]  # the largest acceptable value


class CheckResult(TypedDict):
    id: str
    group: str  # cuda, tensor, autograd, multigpu, system, bench, or user
    status: Status
    duration_s: float
    message: str
    metrics: List[Metric]


class TargetReport(TypedDict):
    """What the runner writes for one target (envkit adds nothing but the target's name)."""

    schema_version: int
    target: str
    started_at: str
    duration_s: float
    environment: Dict[str, Any]  # the fingerprint: versions, GPUs, driver; open-ended
    summary: Counts
    checks: List[CheckResult]


def check_result(
    check_id: str, status: Status, duration_s: float, message: str, metrics: List[Metric]
) -> CheckResult:
    """The one constructor of a check's result, for the runner and its error paths alike."""
    return {
        "id": check_id,
        "group": check_id.split(".", 1)[0],
        "status": status,
        "duration_s": duration_s,
        "message": message,
        "metrics": metrics,
    }


def empty_counts() -> Counts:
    return {"pass": 0, "fail": 0, "skip": 0, "error": 0}


class RunnerConfig(TypedDict, total=False):
    """The runner's settings (`bundle.zip run --config JSON`): what envkit demands of a target,
    made by one function on the host (verify/resolve.py's `runner_config`) and read by one class
    here (core/context.py's `Context`). Keys absent take the defaults below."""

    target: str
    require_gpu: bool
    expected_gpus: Optional[int]
    min_shm: str  # a size: 1gb, 512m (SIZE_UNITS)
    thresholds: Dict[str, float]  # check id: the smallest acceptable fraction of peak
    bench: bool
    only: List[str]
    skip: List[str]
    expected_pip_index: Optional[str]
    expected_torch: Optional[str]
    expected_cuda: Optional[str]
    expected_apt_any: List[str]
    expected_arch: Optional[str]
    timeout_scale: float
    user_checks_dir: Optional[str]
    user_checks_timeout_s: float
    gpu: Dict[str, Any]  # verify.gpu's expectations (PCIe, NVLinks, XID classes...)
    stress_s: Optional[float]
    torch: bool  # False: the project has no torch (torch: none); torch's checks skip
    emulated: bool  # the target runs under QEMU: benchmarks skip (they would time the emulator)
    # Set by the suite itself or by tests, never by envkit's host side:
    gpu_watch: str  # the run's watch record, for the "after" checks
    lock_path: str
    shm_path: str
    dataloader_workers: int
    dataloader_item_floats: int
    python: str
    notebook_wait_s: float


# The defaults, in one place: the config model, the host's settings and the checks read these.
DEFAULT_MIN_SHM = "1gb"
DEFAULT_USER_CHECKS_TIMEOUT_S = 600.0
# The fraction of its published peak (suite/skus.json) a healthy GPU reaches at least, when
# verify.thresholds names none: well below what a healthy H100 and H200 measure (bf16 68-80 %,
# memory 86-89 %, host link 80 %+), far above a throttled, shared or mis-linked GPU.
DEFAULT_THRESHOLDS = {
    "bench.matmul_bf16": 0.5,
    "bench.matmul_fp16": 0.5,
    "bench.matmul_tf32": 0.4,
    "bench.matmul_fp32": 0.5,
    "bench.memory_bandwidth": 0.65,  # above DCGM diag's floors (0.57-0.61 of the spec)
    # A healthy pinned copy reaches 0.84 (host to device) and 0.87 (back) of a Gen5 x16 link's
    # rate on an H100 SXM (docs/evidence/2026-11-22-nvidia-h100-80gb-hbm3, report.json)
    "bench.host_device": 0.65,
    "bench.allreduce_busbw": 0.25,
    # A peer copy between two GPUs: half what a healthy pair reaches of the slower end's link
    # (NVLink or PCIe; DCGM and nvbandwidth time device-to-device copies near 0.8 of it)
    "bench.p2p": 0.4,
    "stress.gpu": 0.2,  # every GPU at once under full load: power caps apply
}

# Sizes as people write them (envkit.yaml's shm_size, min_shm and memory, Docker's --shm-size):
# a whole number and an optional k, m or g, with an optional b; powers of 1024, as Docker reads
# them. The one grammar: the config validates with it, the checks and the renders read with it.
SIZE = re.compile(r"([0-9]+)([bkmg]?)b?")
SIZE_UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


def size_bytes(text: str) -> int:
    """'16gb' -> 17179869184; ValueError for anything else."""
    found = SIZE.fullmatch(str(text).strip().lower())
    if not found:
        raise ValueError(f"not a size: {text!r} (write one such as '16gb', '512m' or '2g')")
    return int(found.group(1)) * SIZE_UNITS[found.group(2)]
