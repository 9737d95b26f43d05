"""What the gpu.* checks judge by, as data: link rates, the clock-event reasons that are faults,
the environment variables that distort a measurement (XIDs: suite/xid_rules.py; SKUs:
suite/skus.py). docs/gpu-health.md gives every row's source; verify.gpu in envkit.yaml
overrides per site. Python 3.8 syntax."""

from __future__ import annotations

from typing import Dict, Iterable, List, Tuple

# Clock-event reasons that mean the hardware slowed itself (DCGM's health watch treats these as
# faults); the others (idle, application clocks, sync boost, the software power cap, display
# clocks) are normal capping.
FAULT_REASONS = ("hw_slowdown", "sw_thermal", "hw_thermal", "hw_power_brake")


# GB/s per lane and direction after encoding (PCI-SIG: 8b/10b to Gen2, 128b/130b from Gen3,
# Gen6 at 64 GT/s with FLIT/PAM4).
PCIE_LANE_GBS = {1: 0.25, 2: 0.5, 3: 0.985, 4: 1.969, 5: 3.938, 6: 7.563}
# GB/s per NVLink and direction, by NVML's NVLink version (1.0, 2.0, 2.2, 3.0, 3.1, 4.0, 5.0).
NVLINK_LINK_GBS = {1: 20.0, 2: 25.0, 3: 25.0, 4: 25.0, 5: 25.0, 6: 25.0, 7: 50.0}


# Variables that change what the suite measures (serialised launches, an injected profiler or
# debugger, TF32 forced off, MPS limiting the SMs, no caching allocator), each with the values
# that do it: "on" is any value but empty and 0 (the variable is a switch), "set" is any
# value but empty (NVIDIA_TF32_OVERRIDE=0 is the very value that forces TF32 off), "below 100"
# a percentage short of the whole GPU. verify.gpu.allow_env accepts some by name.
DISTORTING_ENV: Dict[str, Tuple[str, str]] = {
    "CUDA_LAUNCH_BLOCKING": ("on", "serialises every kernel launch"),
    "CUDA_INJECTION64_PATH": ("set", "injects a profiling or tracing library"),
    "CUDA_INJECTION32_PATH": ("set", "injects a profiling or tracing library"),
    "NVIDIA_TF32_OVERRIDE": ("set", "forces TF32 on or off for every library"),
    "CUDA_ENABLE_COREDUMP_ON_EXCEPTION": ("on", "debugger core dumps on"),
    "CUDA_DEVICE_WAITS_ON_EXCEPTION": ("on", "a kernel exception waits for a debugger"),
    "CUDA_DEBUGGER_SOFTWARE_PREEMPTION": ("on", "debugger preemption on"),
    "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE": ("below 100", "MPS limits the SMs this process may use"),
    "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT": ("set", "MPS limits this process's device memory"),
    "PYTORCH_NO_CUDA_MEMORY_CACHING": ("on", "torch's caching allocator is off"),
    "CUDA_CACHE_DISABLE": ("on", "the kernel JIT cache is off"),
}
PROFILER_PRELOADS = ("libnsys", "libcupti", "nsight", "libToolsInjection")


def _distorts(kind: str, value: str) -> bool:
    if kind == "set":
        return value.strip() != ""
    if kind == "below 100":
        try:
            return float(value) < 100
        except ValueError:
            return True  # a value MPS cannot read as a percentage is still set: say so
    return value.strip() not in ("", "0")


def distorting_env(environ: Dict[str, str], allowed: Iterable[str]) -> List[str]:
    """NAME=VALUE (why) for every distorting variable set here, less the allowed ones."""
    allow = set(allowed)
    found = []
    for name, (kind, why) in sorted(DISTORTING_ENV.items()):
        value = environ.get(name)
        if value is None or name in allow or not _distorts(kind, value):
            continue
        found.append(f"{name}={value} ({why})")
    preload = environ.get("LD_PRELOAD", "")
    if "LD_PRELOAD" not in allow and any(lib in preload for lib in PROFILER_PRELOADS):
        found.append(f"LD_PRELOAD={preload} (a profiler is preloaded)")
    return found
