"""The GPUs' own state, from the best source this target has: NVML through its library, else
nvidia-smi (fewer fields; checks that need the rest skip saying why)."""

from __future__ import annotations

from typing import Union

from .nvml import Unavailable
from .nvml_read import NvmlGpus
from .smi import Smi

Source = Union[NvmlGpus, Smi]


def open_gpus() -> Source:
    """An open source (close it when done), or Unavailable naming what is missing."""
    try:
        return NvmlGpus.open()
    except Unavailable as library:
        try:
            return Smi.open()
        except Unavailable as smi:
            raise Unavailable(f"{library}; {smi}") from None
