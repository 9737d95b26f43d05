"""Published dense peak figures per GPU (TFLOP/s, memory GB/s), to put measurements in context:
the SKU table's (suite/skus.py), found by the device's product name in whole words. An unknown
GPU gets its figures reported without a fraction of peak."""

from __future__ import annotations

from typing import Optional

from .skus import Sku, sku_for

Peak = Sku  # fp32, tf32, fp16, bf16, memory_gbs, name, recalled


def peak_for(device_name: str) -> Optional[Sku]:
    found = sku_for(None, device_name)
    return found if found is not None and found.fp32 is not None else None
