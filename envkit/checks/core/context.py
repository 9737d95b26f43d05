"""What a check sees: the verification settings, the devices, and where to put its metrics."""

from __future__ import annotations

from typing import Any

from .contract import Metric


class Context:
    def __init__(self, config: dict[str, Any]) -> None:
        self.config = config
        self.metrics: list[Metric] = []
        self.current: str = ""

    @property
    def require_gpu(self) -> bool:
        return bool(self.config.get("require_gpu", False))

    @property
    def expected_torch(self) -> str | None:
        """The torch release envkit installed (None where the config did not choose one)."""
        value = self.config.get("expected_torch")
        return str(value) if value else None

    @property
    def expected_cuda(self) -> str | None:
        """The CUDA build envkit installed: "13.0", or "cpu"; None where it chose none."""
        value = self.config.get("expected_cuda")
        return str(value) if value else None

    @property
    def expected_gpus(self) -> int | None:
        value = self.config.get("expected_gpus")
        return int(value) if value is not None else None

    def threshold(self, check_id: str, default: float | None = None) -> float | None:
        """verify.thresholds' value for the check, else the check's own default."""
        value = (self.config.get("thresholds") or {}).get(check_id)
        return float(value) if value is not None else default

    @property
    def gpu_expectations(self) -> dict[str, Any]:
        """verify.gpu: what this site expects of its GPUs (PCIe, NVLinks, XID classes...)."""
        return dict(self.config.get("gpu") or {})

    def gpu_count(self) -> int:
        import torch

        return torch.cuda.device_count() if torch.cuda.is_available() else 0

    def metric(
        self,
        name: str,
        value: float,
        unit: str,
        *,
        peak: float | None = None,
        threshold: float | None = None,
        minimum: float | None = None,
        maximum: float | None = None,
    ) -> Metric:
        """Record a figure. threshold is the minimum acceptable fraction of peak; minimum and
        maximum bound the value itself. A passing check fails when a figure breaks a bound."""
        fraction = value / peak if peak else None
        row: Metric = {
            "name": name,
            "value": value,
            "unit": unit,
            "peak": peak,
            "fraction_of_peak": fraction,
            "threshold": threshold,
            "minimum": minimum,
            "maximum": maximum,
        }
        self.metrics.append(row)
        return row
