"""Each GPU product the checks know, by exact identity: the PCI device id NVML reports
(nvmlPciInfo_t.pciDeviceId >> 16), else the product name matched by whole words, so "NVIDIA
GH200 480GB" is never taken for an H200. An unknown product is named in the report and judged
by the node's own baseline (suite/topology.py), never by a near name.

Per row: the NVLink counts a healthy board shows, the host link (PCIe, or NVLink-C2C on Grace
parts), published dense peaks (TFLOP/s) and memory bandwidth (GB/s), and DCGM's diag floor for
memory bandwidth (nvvs/diag-skus.yaml.in: 0.75 of what dcgmproftester measures).

Sources (docs/gpu-health.md gives the table): device ids and names from NVIDIA's
open-gpu-kernel-modules README (driver 595.45.04, the "Compatible GPUs" table) and pci.ids;
DCGM floors from NVIDIA/DCGM @72fa3fe; peaks from NVIDIA datasheets (rows marked recalled=True
carry recalled datasheet figures, not re-checked against a fetched page). Python 3.8 syntax:
this runs in old images."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional, Tuple, TypedDict

PCIE, C2C = "pcie", "nvlink-c2c"


@dataclass(frozen=True)
class Sku:
    name: str
    device_ids: Tuple[int, ...]
    names: Tuple[str, ...]  # whole-word patterns (regex) in NVML's or torch's product name
    # Healthy active NVLink counts. One value: fixed by the board. Several: a bridge or a
    # topology decides (PCIe/NVL boards, Grace superchips), so without the node's baseline the
    # count is a warning, never a silent pass. None: not verified, the baseline judges.
    nvlinks: Optional[Tuple[int, ...]]
    host_link: str = PCIE
    fp32: Optional[float] = None
    tf32: Optional[float] = None
    fp16: Optional[float] = None  # dense, FP32 accumulate where the card differs
    bf16: Optional[float] = None
    memory_gbs: Optional[float] = None  # published peak
    dcgm_min_memory_gbs: Optional[float] = None  # DCGM diag's floor, MB/s / 1000
    recalled: bool = False

    @property
    def varies(self) -> bool:
        """The healthy link count depends on the node (a bridge, a topology), not the SKU."""
        return self.nvlinks is None or len(self.nvlinks) > 1


class Peaks(TypedDict):
    fp32: float
    tf32: float
    fp16: float
    bf16: float


# Dense peaks (TFLOP/s) that several boards of one chip and clock publish alike.
HOPPER_SXM = Peaks(fp32=67, tf32=494.5, fp16=989, bf16=989)
HOPPER_NVL = Peaks(fp32=60, tf32=417.5, fp16=835, bf16=835)
AMPERE_A100 = Peaks(fp32=19.5, tf32=156, fp16=312, bf16=312)

SKUS: Tuple[Sku, ...] = (
    Sku(
        "H100 SXM5 80GB",
        (0x2330,),
        (r"H100 80GB HBM3", r"H100 SXM5?"),
        (18,),
        **HOPPER_SXM,
        memory_gbs=3350,
        dcgm_min_memory_gbs=1905,
    ),
    Sku(
        "H100 SXM5 (94/64/96 GB, PG5xx)",
        (0x2339, 0x2337, 0x2338, 0x2336, 0x233D),
        (),
        None,
        **HOPPER_SXM,
    ),
    Sku(
        "H100 PCIe",
        (0x2331,),
        (r"H100 PCIe",),
        (12, 0),
        fp32=51,
        tf32=378,
        fp16=756,
        bf16=756,
        memory_gbs=2000,
        dcgm_min_memory_gbs=1230,
    ),
    Sku(
        "H100 NVL",
        (0x2321,),
        (r"H100 NVL",),
        (12, 0),
        **HOPPER_NVL,
        memory_gbs=3900,
        dcgm_min_memory_gbs=2043,
        recalled=True,
    ),
    Sku("H800 SXM5", (0x2324,), (r"H800",), (8,), dcgm_min_memory_gbs=1920),
    Sku("H800 PCIe / NVL", (0x2322, 0x233A), (r"H800 PCIe", r"H800 NVL"), (8, 0)),
    Sku(
        "H200 SXM",
        (0x2335,),
        (r"H200",),
        (18,),
        **HOPPER_SXM,
        memory_gbs=4800,
        # DCGM writes 2333 for 0x2335, with the comment that 3110 GB/s is measured: GB/s
        # written into the MB/s field, read here as GB/s.
        dcgm_min_memory_gbs=2333,
    ),
    Sku(
        "H200 NVL",
        (0x233B,),
        (r"H200 NVL",),
        (18, 0),
        **HOPPER_NVL,
        memory_gbs=4800,
        dcgm_min_memory_gbs=2212.5,
        recalled=True,
    ),
    # Grace Hopper: the GPU's 18 NVLinks are wired only in NVL2/NVL32 systems (0 on a
    # standalone node); the host link is NVLink-C2C, not PCIe.
    Sku(
        "GH200 (96 GB HBM3)",
        (0x2342,),
        (r"GH200 120GB", r"GH200 480GB", r"GH200"),
        (18, 0),
        host_link=C2C,
        **HOPPER_SXM,
        memory_gbs=4000,
        dcgm_min_memory_gbs=2130,
    ),
    Sku(
        "GH200 (144 GB HBM3e)",
        (0x2348,),
        (r"GH200 144GB? HBM3e",),
        (18, 0),
        host_link=C2C,
        **HOPPER_SXM,
        memory_gbs=4800,
        dcgm_min_memory_gbs=2340,
    ),
    Sku(
        "B200",
        (0x2901, 0x2909),
        (r"B200",),
        (18,),
        fp32=80,
        tf32=1100,
        fp16=2250,
        bf16=2250,
        memory_gbs=8000,
        dcgm_min_memory_gbs=4072.5,
        recalled=True,
    ),
    Sku(
        "GB200",
        (0x2941,),
        (r"GB200",),
        (18,),
        host_link=C2C,
        fp32=80,
        tf32=1250,
        fp16=2500,
        bf16=2500,
        memory_gbs=8000,
        dcgm_min_memory_gbs=2602.5,
        recalled=True,
    ),
    Sku(
        "B300 SXM6",
        (0x3182,),
        (r"B300",),
        (18,),
        fp32=75,
        tf32=1100,
        fp16=2250,
        bf16=2250,
        memory_gbs=8000,
        dcgm_min_memory_gbs=4623.36,
        recalled=True,
    ),
    Sku(
        "GB300",
        (0x31C2, 0x31C3, 0x31A1),
        (r"GB300",),
        (18,),
        host_link=C2C,
        dcgm_min_memory_gbs=4522.5,
    ),
    # DGX Spark: one GPU, no NVLink, LPDDR5x shared with Grace over C2C.
    Sku("GB10 (DGX Spark)", (0x2E12,), (r"GB10",), (0,), host_link=C2C, memory_gbs=273),
    Sku(
        "A100 SXM4 80GB",
        (0x20B2,),
        (r"A100[- ]SXM4?[- ]80GB", r"A100 80GB(?! PCIe)"),
        (12,),
        **AMPERE_A100,
        memory_gbs=2039,
        dcgm_min_memory_gbs=1173,
    ),
    Sku(
        "A100 SXM4 40GB",
        (0x20B0,),
        (r"A100[- ]SXM4?[- ]40GB",),
        (12,),
        **AMPERE_A100,
        memory_gbs=1555,
    ),
    Sku(
        "A100 PCIe 80GB",
        (0x20B5,),
        (r"A100 80GB PCIe",),
        (12, 0),
        **AMPERE_A100,
        memory_gbs=1935,
        dcgm_min_memory_gbs=1121.25,
    ),
    Sku(
        "A100 PCIe 40GB",
        (0x20F1, 0x20B1),
        (r"A100[- ]PCIE[- ]40GB",),
        (12, 0),
        **AMPERE_A100,
        memory_gbs=1555,
        dcgm_min_memory_gbs=969.75,
    ),
    Sku("A800", (0x20F3, 0x20BD, 0x20F5, 0x20F6), (r"A800",), None),
    Sku(
        "L40S",
        (0x26B9,),
        (r"L40S",),
        (0,),
        fp32=91.6,
        tf32=183,
        fp16=362,
        bf16=362,
        memory_gbs=864,
        dcgm_min_memory_gbs=525,
    ),
    Sku(
        "L40", (0x26B5,), (r"L40",), (0,), fp32=90.5, tf32=90.5, fp16=181, bf16=181, memory_gbs=864
    ),
    Sku(
        "L4",
        (0x27B8,),
        (r"L4",),
        (0,),
        fp32=30.3,
        tf32=60,
        fp16=121,
        bf16=121,
        memory_gbs=300,
        dcgm_min_memory_gbs=198.5,
        recalled=True,
    ),
    Sku(
        "A10 / A10G",
        (0x2236, 0x2237),
        (r"A10G?",),
        (0,),
        fp32=31.2,
        tf32=62.5,
        fp16=125,
        bf16=125,
        memory_gbs=600,
        recalled=True,
    ),
    Sku(
        "V100 SXM2",
        (0x1DB1, 0x1DB5, 0x1DB8),
        (r"V100[- ]SXM2",),
        (6,),
        fp32=15.7,
        fp16=125,
        memory_gbs=900,
        recalled=True,
    ),
    Sku(
        "V100 PCIe",
        (0x1DB4, 0x1DB6, 0x1DF6),
        (r"V100[- ]PCIE", r"V100S"),
        (0,),
        fp32=14,
        fp16=112,
        memory_gbs=900,
        recalled=True,
    ),
    Sku(
        "RTX 4090",
        (0x2684,),
        (r"RTX 4090",),
        (0,),
        fp32=82.6,
        tf32=82.6,
        fp16=165,
        bf16=165,
        memory_gbs=1008,
        recalled=True,
    ),
    Sku(
        "RTX 3090",
        (0x2204,),
        (r"RTX 3090",),
        (0,),
        fp32=35.6,
        tf32=35.6,
        fp16=71,
        bf16=71,
        memory_gbs=936,
        recalled=True,
    ),
    Sku(
        "RTX PRO 6000 Blackwell Server Edition",
        (0x2BB5,),
        (r"RTX PRO 6000 Blackwell Server Edition",),
        (0,),
    ),
)

_BY_ID = {device: sku for sku in SKUS for device in sku.device_ids}


def _whole_words(pattern: str) -> re.Pattern[str]:
    return re.compile(r"(?<![A-Za-z0-9])" + pattern + r"(?![A-Za-z0-9])", re.IGNORECASE)


# The longest pattern first: "H200 NVL" before "H200", "H800 PCIe" before "H800".
_BY_NAME = sorted(
    ((_whole_words(p), sku) for sku in SKUS for p in sku.names),
    key=lambda row: -len(row[0].pattern),
)


def sku_for(device_id: Optional[int] = None, name: str = "") -> Optional[Sku]:
    """The product with this PCI device id; without one, the first row one of whose name
    patterns matches whole words of NAME (NVML's "NVIDIA H100 80GB HBM3", torch's the same)."""
    if device_id:
        return _BY_ID.get(int(device_id))
    for pattern, sku in _BY_NAME:
        if pattern.search(name):
            return sku
    return None


def peak_for(device_name: str) -> Optional[Sku]:
    """The row whose published dense peaks put a measurement in context, found by the device's
    product name; None for an unknown GPU (its figures are reported without a fraction of
    peak) or a row without peak figures."""
    found = sku_for(None, device_name)
    return found if found is not None and found.fp32 is not None else None


def sku_of(snapshot: dict) -> Optional[Sku]:  # type: ignore[type-arg]
    """The product of an NVML snapshot: its PCI device id, else its name."""
    return sku_for(snapshot.get("pci_device_id"), str(snapshot.get("name") or ""))
