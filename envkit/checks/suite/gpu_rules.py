"""What the gpu.* checks judge by, as data: XID classes, each SKU's NVLinks, link rates, the
clock-event reasons that are faults, the environment variables that distort a measurement.
docs/gpu-health.md gives every row's source; verify.gpu in envkit.yaml overrides per site."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, FrozenSet, Iterable, List, Optional, Tuple

# XIDs from NVIDIA's Xid catalogue (docs.nvidia.com/deploy/xid-errors). "warn": the application
# caused it (a bad kernel, an illegal access, a killed job); the hardware is fine, so it is
# reported but fails nothing. Every other XID fails: unknown ones too, until classified.
XIDS: Dict[int, Tuple[str, str]] = {
    8: ("fail", "GPU stopped processing (channel timeout)"),
    13: ("warn", "graphics engine exception (an application's illegal instruction or address)"),
    31: ("warn", "GPU memory page fault (an application's illegal access)"),
    32: ("fail", "invalid or corrupted push buffer stream (PCIe or driver)"),
    38: ("fail", "driver firmware error"),
    43: ("warn", "GPU stopped processing (a user application's fault)"),
    45: ("warn", "preemptive cleanup after an earlier error (a killed application)"),
    48: ("fail", "double-bit ECC error"),
    61: ("fail", "internal micro-controller breakpoint"),
    62: ("fail", "internal micro-controller halt"),
    63: ("warn", "ECC page retirement or row remapping recorded (gpu.row_remap judges it)"),
    64: ("fail", "ECC page retirement or row remapping failed"),
    68: ("warn", "video processor exception (an application's stream)"),
    69: ("fail", "graphics engine class error"),
    74: ("fail", "NVLink error"),
    79: ("fail", "GPU has fallen off the bus"),
    92: ("fail", "high single-bit ECC error rate"),
    94: ("fail", "contained ECC error (a reset is needed to remap the row)"),
    95: ("fail", "uncontained ECC error (reset required)"),
    109: ("warn", "context switch timeout (usually the application)"),
    119: ("fail", "GSP RPC timeout"),
    120: ("fail", "GSP error"),
    121: ("fail", "C2C link error"),
    140: ("fail", "ECC unrecovered error"),
    143: ("fail", "GPU initialization failure"),
    154: ("fail", "GPU recovery action changed (reset or reboot required)"),
}


def xid_class(xid: int, warn: Iterable[int] = (), fail: Iterable[int] = ()) -> str:
    """fail or warn: the site's lists (verify.gpu.xid_warn / xid_fail) over the catalogue."""
    if xid in set(fail):
        return "fail"
    if xid in set(warn):
        return "warn"
    return XIDS.get(xid, ("fail", ""))[0]


def xid_text(xid: int) -> str:
    known = XIDS.get(xid)
    return f"XID {xid} ({known[1]})" if known else f"XID {xid} (not in envkit's table)"


# Clock-event reasons that mean the hardware slowed itself (DCGM's health watch treats these as
# faults); idle, application clocks, sync boost and the software power cap are normal capping.
FAULT_REASONS = ("hw_slowdown", "sw_thermal", "hw_thermal", "hw_power_brake")
NORMAL_REASONS = ("gpu_idle", "applications_clocks", "sw_power_cap", "sync_boost", "display_clocks")


@dataclass(frozen=True)
class Sku:
    name: str
    nvlinks: Tuple[int, ...]  # the active-link counts a healthy board shows (0: no bridge)


# First match by tokens in the NVML name wins (as checks/suite/peaks.py). PCIe boards take an
# optional NVLink bridge: all of its links or none. SXM boards always have all of theirs.
SKUS: List[Tuple[Tuple[str, ...], Sku]] = [
    (("H200",), Sku("H200 SXM", (18,))),
    (("H100", "PCIE"), Sku("H100 PCIe", (12, 0))),
    (("H100", "NVL"), Sku("H100 NVL", (12, 0))),
    (("H100",), Sku("H100 SXM", (18,))),
    (("H800",), Sku("H800 SXM", (8,))),
    (("A100", "PCIE"), Sku("A100 PCIe", (12, 0))),
    (("A100",), Sku("A100 SXM", (12,))),
    (("A800",), Sku("A800 SXM", (8,))),
    (("V100", "PCIE"), Sku("V100 PCIe", (0,))),
    (("V100",), Sku("V100 SXM2", (6,))),
    (("L40S",), Sku("L40S", (0,))),
    (("L40",), Sku("L40", (0,))),
    (("L4",), Sku("L4", (0,))),
    (("A10",), Sku("A10", (0,))),
]


def sku_for(name: str) -> Optional[Sku]:
    upper = name.upper()
    for tokens, sku in SKUS:
        if all(token in upper for token in tokens):
            return sku
    return None


def expected_nvlinks(name: str, configured: Optional[int]) -> Optional[FrozenSet[int]]:
    """The active-link counts that pass: the site's (verify.gpu.nvlinks) over the SKU's."""
    if configured is not None:
        return frozenset({configured})
    sku = sku_for(name)
    return frozenset(sku.nvlinks) if sku else None


# GB/s per lane and direction after encoding (PCI-SIG: 8b/10b to Gen2, 128b/130b from Gen3,
# Gen6 at 64 GT/s with FLIT/PAM4).
PCIE_LANE_GBS = {1: 0.25, 2: 0.5, 3: 0.985, 4: 1.969, 5: 3.938, 6: 7.563}
# GB/s per NVLink and direction, by NVML's NVLink version (1.0, 2.0, 2.2, 3.0, 3.1, 4.0, 5.0).
NVLINK_LINK_GBS = {1: 20.0, 2: 25.0, 3: 25.0, 4: 25.0, 5: 25.0, 6: 25.0, 7: 50.0}


def pcie_rate_gbs(generation: Optional[int], width: Optional[int]) -> Optional[float]:
    if not generation or not width or generation not in PCIE_LANE_GBS:
        return None
    return PCIE_LANE_GBS[generation] * width


# Variables that change what the suite measures (serialised launches, an injected profiler or
# debugger, TF32 forced off, MPS limiting the SMs, no caching allocator): a run under them is
# not the environment users train in. verify.gpu.allow_env accepts some by name.
DISTORTING_ENV: Dict[str, str] = {
    "CUDA_LAUNCH_BLOCKING": "serialises every kernel launch",
    "CUDA_INJECTION64_PATH": "injects a profiling or tracing library",
    "CUDA_INJECTION32_PATH": "injects a profiling or tracing library",
    "NVIDIA_TF32_OVERRIDE": "forces TF32 on or off for every library",
    "CUDA_ENABLE_COREDUMP_ON_EXCEPTION": "debugger core dumps on",
    "CUDA_DEVICE_WAITS_ON_EXCEPTION": "a kernel exception waits for a debugger",
    "CUDA_DEBUGGER_SOFTWARE_PREEMPTION": "debugger preemption on",
    "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE": "MPS limits the SMs this process may use",
    "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT": "MPS limits this process's device memory",
    "PYTORCH_NO_CUDA_MEMORY_CACHING": "torch's caching allocator is off",
    "CUDA_CACHE_DISABLE": "the kernel JIT cache is off",
}
PROFILER_PRELOADS = ("libnsys", "libcupti", "nsight", "libToolsInjection")


def distorting_env(environ: Dict[str, str], allowed: Iterable[str]) -> List[str]:
    """NAME=VALUE (why) for every distorting variable set here, less the allowed ones."""
    allow = set(allowed)
    found = []
    for name, why in sorted(DISTORTING_ENV.items()):
        value = environ.get(name)
        if value not in (None, "", "0") and name not in allow:
            found.append(f"{name}={value} ({why})")
    preload = environ.get("LD_PRELOAD", "")
    if "LD_PRELOAD" not in allow and any(lib in preload for lib in PROFILER_PRELOADS):
        found.append(f"LD_PRELOAD={preload} (a profiler is preloaded)")
    return found
