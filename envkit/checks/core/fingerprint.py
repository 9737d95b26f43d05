"""The environment a report was measured in: versions, GPUs, host."""

from __future__ import annotations

import os
import platform
import re
import socket
import subprocess
import sys
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
        query = ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"]
        out = subprocess.run(query, capture_output=True, text=True, timeout=20, check=False)
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


def build_facts(torch: Any) -> dict[str, Any]:
    """What the torch build itself says, with or without a driver: its CUDA version, the
    architectures compiled in, and the cuDNN and NCCL it was built with (None where absent)."""
    facts: dict[str, Any] = {"cuda_runtime": torch.version.cuda, "arch_list": []}
    facts["cudnn"] = facts["nccl"] = None
    if torch.version.cuda is None:
        return facts
    try:  # the build's own flags: no driver needed (get_arch_list() is empty without one)
        flags = torch._C._cuda_getArchFlags()
        facts["arch_list"] = flags.split() if flags else []
    except Exception as exc:  # a build without the flags, or a broken one: the report says so
        facts["arch_error"] = f"{type(exc).__name__}: {exc}"
    try:
        version = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
        facts["cudnn"] = _cudnn_text(version)
    except Exception as exc:  # cuDNN present but unloadable
        facts["cudnn_error"] = f"{type(exc).__name__}: {exc}"
    try:
        nccl = torch.cuda.nccl.version()
        facts["nccl"] = ".".join(map(str, nccl)) if isinstance(nccl, tuple) else str(nccl)
    except Exception as exc:  # NCCL missing from this build
        facts["nccl_error"] = f"{type(exc).__name__}: {exc}"
    return facts


def _cudnn_text(version: int | None) -> str | None:
    """cuDNN's integer version as text: 8902 -> 8.9.2 (cuDNN 8), 90100 -> 9.1.0 (cuDNN 9+)."""
    if version is None:
        return None
    if version >= 90000:
        return f"{version // 10000}.{version // 100 % 100}.{version % 100}"
    return f"{version // 1000}.{version // 100 % 10}.{version % 100}"


def fingerprint() -> dict[str, Any]:
    info: dict[str, Any] = {
        "python": platform.python_version(),
        # Which environment ran the suite: a conda env's, a venv's or the system's Python.
        "python_prefix": sys.prefix,
        "platform": platform.platform(),
        # The architecture (x86_64, aarch64: Grace nodes), on its own: nodes are compared with
        # the run's others of the same one.
        "machine": platform.machine(),
        "hostname": socket.gethostname(),
        "driver": driver_version(),
        "driver_cuda": driver_cuda_version(),
        **_nvml_identities(),
        "nccl_env": {k: v for k, v in sorted(os.environ.items()) if k.startswith("NCCL_")},
    }
    try:
        import torch
    except ImportError as exc:
        info["torch"] = None
        info["torch_error"] = str(exc)
        return info
    info["torch"] = torch.__version__
    info["cuda_available"] = bool(torch.cuda.is_available())
    info.update(build_facts(torch))
    # A broken driver can make any of these raise; the report says so instead of dying here.
    try:
        info["gpus"] = _gpus(torch)
    except Exception as exc:
        info.setdefault("gpus", [])
        info["gpu_error"] = f"{type(exc).__name__}: {exc}"
    return info


def _nvml_identities() -> dict[str, Any]:
    """Each GPU's VBIOS from NVML (None where NVML cannot be loaded: nodes of one job must agree
    on it, verify/agreement.py), and each GPU's identity as NVML names it (index, UUID, PCI bus
    id, product name): `envkit metrics` labels a GPU's series with them, as dcgm-exporter does."""
    from .nvml import Nvml, Unavailable
    from .nvml_read import Reading, identity

    try:
        nvml = Nvml.open()
    except Unavailable:
        return {"vbios": None}
    versions: list[str] = []
    identities: list[dict[str, Any]] = []
    try:
        for index, handle in enumerate(nvml.handles):
            reading = Reading(index=index)
            identity(nvml, handle, reading)
            found, errors = reading.values, reading.values["errors"]
            versions.append(found["vbios"] if "vbios" in found else f"({errors['vbios']})")
            named = {key: found.get(key) for key in ("uuid", "name", "bus_id")}
            identities.append({"index": index, **named})
        return {"vbios": versions, "nvml_gpus": identities}
    finally:
        nvml.close()


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
