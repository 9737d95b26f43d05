"""Each GPU product the checks know, by exact identity: the PCI device id NVML reports
(nvmlPciInfo_t.pciDeviceId >> 16), else the product name matched by whole words, so "NVIDIA
GH200 480GB" is never taken for an H200. An unknown product is named in the report and judged
by the node's own baseline (suite/topology.py), never by a near name.

Per row: the NVLink counts a healthy board shows, the host link (PCIe, or NVLink-C2C on Grace
parts), published dense peaks (TFLOP/s; tensor figures are NVIDIA's "with sparsity" / 2) and
memory bandwidth (GB/s), the document they come from, and why any figure is absent. A floor is a
fraction of a published figure, never another tool's number (DCGM 4.6 writes the H200's memory
floor a thousand times too low: 2333 where the H100's is 1905000).

The rows are data, in skus.json (docs/gpu-health.md gives the tables). Device ids and names from
NVIDIA's open-gpu-kernel-modules README (driver 595.45.04, "Compatible GPUs") and pci.ids; rows
marked recalled=True carry figures written from the named document without a fetched copy at
hand. Python 3.8 syntax: this runs in old images."""

from __future__ import annotations

import json
import pkgutil
import re
from dataclasses import dataclass
from typing import Optional, Tuple

PCIE, C2C = "pcie", "nvlink-c2c"
FIGURES = ("bf16", "fp16", "tf32", "fp32", "fp8", "memory_gbs")  # a row's published figures


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
    fp8: Optional[float] = None
    memory_gbs: Optional[float] = None
    source: Optional[str] = None  # the document the figures come from; None: there is none
    unpublished: str = ""  # why the figures this row lacks are not given
    recalled: bool = False

    @property
    def varies(self) -> bool:
        """The healthy link count depends on the node (a bridge, a topology), not the SKU."""
        return self.nvlinks is None or len(self.nvlinks) > 1


def _load() -> Tuple[Sku, ...]:
    """The table, from skus.json beside this module (in the package, or in the checks' zip
    bundle: pkgutil reads either). A row's `note` is for the reader, not a field."""
    data = pkgutil.get_data(__package__ or "envkit.checks.suite", "skus.json")
    if data is None:  # never an empty table: every GPU would read as unknown
        raise FileNotFoundError("skus.json is missing beside skus.py")
    rows = []
    for row in json.loads(data):
        row.pop("note", None)
        row["device_ids"] = tuple(int(device, 16) for device in row["device_ids"])
        row["names"] = tuple(row["names"])
        row["nvlinks"] = None if row["nvlinks"] is None else tuple(row["nvlinks"])
        rows.append(Sku(**row))
    return tuple(rows)


SKUS = _load()
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
    return next((sku for pattern, sku in _BY_NAME if pattern.search(name)), None)


def sku_of(snapshot: dict) -> Optional[Sku]:  # type: ignore[type-arg]
    """The product of an NVML snapshot: its PCI device id, else its name."""
    return sku_for(snapshot.get("pci_device_id"), str(snapshot.get("name") or ""))
