"""Published dense peak figures per GPU (TFLOP/s, memory GB/s), to put measurements in context.

Sources: NVIDIA datasheets; rows marked recalled=True are recalled datasheet figures, not
re-checked. An unknown GPU gets its figures reported without a fraction of peak.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Peak:
    name: str
    fp32: float
    tf32: float | None
    fp16: float  # dense, FP32 accumulate where the card differs
    bf16: float | None
    memory_gbs: float
    recalled: bool = False


# Order matters: the first whose every token is in the device name wins.
PEAKS: list[tuple[tuple[str, ...], Peak]] = [
    (("H200",), Peak("H200 SXM", 67, 494.5, 989, 989, 4800)),
    (("H100", "PCIE"), Peak("H100 PCIe", 51, 378, 756, 756, 2000)),
    (("H100",), Peak("H100 SXM", 67, 494.5, 989, 989, 3350)),
    (("A100", "80GB"), Peak("A100 80GB SXM", 19.5, 156, 312, 312, 2039)),
    (("A100",), Peak("A100 40GB SXM", 19.5, 156, 312, 312, 1555)),
    (("L40S",), Peak("L40S", 91.6, 183, 362, 362, 864)),
    (("V100",), Peak("V100 SXM2", 15.7, None, 125, None, 900, recalled=True)),
    (("RTX", "4090"), Peak("RTX 4090", 82.6, 82.6, 165, 165, 1008, recalled=True)),
    (("RTX", "3090"), Peak("RTX 3090", 35.6, 35.6, 71, 71, 936, recalled=True)),
    (("A10",), Peak("A10", 31.2, 62.5, 125, 125, 600, recalled=True)),
]


def peak_for(device_name: str) -> Peak | None:
    upper = device_name.upper()
    for tokens, peak in PEAKS:
        if all(token in upper for token in tokens):
            return peak
    return None
