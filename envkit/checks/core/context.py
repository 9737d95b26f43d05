"""What a check sees: the verification settings, the devices, and where to put its metrics."""

from __future__ import annotations

from typing import List, Optional, Tuple

from .contract import DEFAULT_MIN_SHM, DEFAULT_THRESHOLDS, Metric, RunnerConfig


class Context:
    """What a check reads: the runner's settings (contract.RunnerConfig) through the typed
    properties below, each with its default, and where it puts its figures."""

    def __init__(self, config: RunnerConfig) -> None:
        self.config = config
        self.metrics: list[Metric] = []
        self.current: str = ""

    @property
    def require_gpu(self) -> bool:
        return bool(self.config.get("require_gpu", False))

    @property
    def expected_torch(self) -> str | None:
        """The torch release envkit installed (None where the config did not choose one)."""
        return str(self.config.get("expected_torch") or "") or None

    @property
    def expected_cuda(self) -> str | None:
        """The CUDA build envkit installed: "13.0", or "cpu"; None where it chose none."""
        return str(self.config.get("expected_cuda") or "") or None

    @property
    def min_shm(self) -> str:
        return self.config.get("min_shm") or DEFAULT_MIN_SHM

    @property
    def shm_path(self) -> str:
        return self.config.get("shm_path") or "/dev/shm"  # noqa: S108 - the shared-memory mount

    @property
    def expected_pip_index(self) -> Optional[str]:
        return self.config.get("expected_pip_index")

    @property
    def expected_apt_any(self) -> List[str]:
        return list(self.config.get("expected_apt_any") or [])

    @property
    def python(self) -> Optional[str]:
        """The interpreter the suite runs in, where it is not this one (tests)."""
        return self.config.get("python")

    @property
    def stress_s(self) -> float:
        return float(self.config.get("stress_s") or 0)

    @property
    def gpu_watch(self) -> Optional[str]:
        return self.config.get("gpu_watch")

    @property
    def lock_path(self) -> Optional[str]:
        return self.config.get("lock_path")

    @property
    def notebook_wait_s(self) -> float:
        return float(self.config.get("notebook_wait_s", 60))

    @property
    def dataloader(self) -> Tuple[int, int]:
        """(workers, floats per item) of system.dataloader's probe."""
        config = self.config
        return int(config.get("dataloader_workers", 2)), int(
            config.get("dataloader_item_floats", 1 << 20)  # 4 MiB per item
        )

    @property
    def expected_gpus(self) -> int | None:
        value = self.config.get("expected_gpus")
        return int(value) if value is not None else None

    def threshold(self, check_id: str) -> float | None:
        """verify.thresholds' value for the check, else its default (DEFAULT_THRESHOLDS)."""
        value = (self.config.get("thresholds") or {}).get(check_id)
        return float(value) if value is not None else DEFAULT_THRESHOLDS.get(check_id)

    def gpu_count(self) -> int:
        """The GPUs torch sees (0 for a project without torch: nothing to compare with)."""
        if self.config.get("torch") is False:
            return 0
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
        row: Metric = {
            "name": name,
            "value": value,
            "unit": unit,
            "peak": peak,
            "fraction_of_peak": value / peak if peak else None,
            "threshold": threshold,
            "minimum": minimum,
            "maximum": maximum,
        }
        self.metrics.append(row)
        return row
