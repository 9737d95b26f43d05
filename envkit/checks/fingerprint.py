"""The environment a report was measured in: versions, GPUs, host."""

from __future__ import annotations

import platform
import re
import socket
import subprocess
from pathlib import Path
from typing import Any


def driver_version() -> str | None:
    """The NVIDIA kernel driver's version, from /proc or nvidia-smi; None without one."""
    proc = Path("/proc/driver/nvidia/version")
    if proc.is_file():
        found = re.search(r"Kernel Module\s+(?:for\s+\S+\s+)?([0-9]+\.[0-9.]+)", proc.read_text())
        if found:
            return found.group(1)
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    first = out.stdout.strip().splitlines()[:1]
    return first[0].strip() if out.returncode == 0 and first else None


def driver_cuda_version() -> str | None:
    """The newest CUDA the installed driver supports (cuDriverGetVersion), e.g. '12.8'."""
    import ctypes

    try:
        libcuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return None
    version = ctypes.c_int(0)
    if libcuda.cuDriverGetVersion(ctypes.byref(version)) != 0:
        return None
    return f"{version.value // 1000}.{(version.value % 1000) // 10}"


def fingerprint() -> dict[str, Any]:
    info: dict[str, Any] = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "hostname": socket.gethostname(),
        "driver": driver_version(),
        "driver_cuda": driver_cuda_version(),
    }
    try:
        import torch
    except ImportError as exc:
        info["torch"] = None
        info["torch_error"] = str(exc)
        return info
    info["torch"] = torch.__version__
    info["cuda_runtime"] = torch.version.cuda
    info["cuda_available"] = bool(torch.cuda.is_available())
    try:
        cudnn_ok = torch.backends.cudnn.is_available()
        info["cudnn"] = torch.backends.cudnn.version() if cudnn_ok else None
    except Exception:  # cuDNN present but unloadable
        info["cudnn"] = None
    try:
        nccl = torch.cuda.nccl.version() if torch.cuda.is_available() else None
        info["nccl"] = ".".join(map(str, nccl)) if isinstance(nccl, tuple) else nccl
    except Exception:  # NCCL missing from this build
        info["nccl"] = None
    # A broken driver can make any of these raise; the report says so instead of dying here.
    try:
        info["gpus"] = _gpus(torch)
        info["arch_list"] = torch.cuda.get_arch_list() if torch.version.cuda else []
    except Exception as exc:
        info.setdefault("gpus", [])
        info["gpu_error"] = f"{type(exc).__name__}: {exc}"
    return info


def _gpus(torch: Any) -> list[dict[str, Any]]:
    gpus = []
    if torch.cuda.is_available():
        for index in range(torch.cuda.device_count()):
            props = torch.cuda.get_device_properties(index)
            gpus.append(
                {
                    "index": index,
                    "name": props.name,
                    "capability": f"{props.major}.{props.minor}",
                    "memory_bytes": int(props.total_memory),
                    "multiprocessors": int(props.multi_processor_count),
                }
            )
    return gpus
