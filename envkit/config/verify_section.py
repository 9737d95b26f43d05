"""The `verify:` section: what `envkit verify` demands of the environment, and what this site
expects of its GPUs' own health (verify.gpu), where the checks' defaults do not fit."""

from __future__ import annotations

from pydantic import Field, model_validator

from envkit.checks.core.contract import DEFAULT_MIN_SHM
from envkit.config.choices import PcieWidth, Persistence, Regressions
from envkit.config.fields import (
    MAX_GPUS,
    AnyPath,
    Count,
    EnvKey,
    PeakFraction,
    ShmSize,
    Strict,
    ThresholdId,
    XidCode,
)
from envkit.errors import FieldError


class GpuExpectations(Strict):
    """What this site expects of its GPUs, where envkit's defaults (right for H100 SXM and PCIe,
    A100, L40S and consumer cards) do not fit: the gpu.* checks' rules (docs/gpu-health.md)."""

    pcie_gen: int | None = Field(
        None,
        ge=1,
        le=6,
        strict=True,
        description="PCIe generation under load (default: each GPU's own maximum).",
    )
    pcie_width: PcieWidth | None = Field(
        None,
        description="PCIe lanes (default: each GPU's own maximum; some platforms train "
        "x8 on purpose).",
    )
    nvlinks: Count | None = Field(
        None,
        le=36,
        description="Active NVLinks per GPU (default: the SKU's "
        "count, e.g. 18 on H100 SXM; 12 or 0 on PCIe boards with or without a bridge).",
    )
    xid_warn: tuple[XidCode, ...] = Field(
        (), description="XIDs that only warn here, besides the application-caused ones."
    )
    xid_fail: tuple[XidCode, ...] = Field((), description="XIDs that fail here, whatever class.")
    spread: float | None = Field(
        None,
        gt=0,
        lt=1,
        allow_inf_nan=False,
        description="How far below the median of the "
        "node's other GPUs one GPU's benchmark may fall (default 0.15).",
    )
    throttle_samples: Count | None = Field(
        None,
        description="Samples under load with a hardware slowdown, thermal "
        "or power brake reason tolerated in a run (default 0).",
    )
    nvlink_errors: Count | None = Field(
        None,
        description="NVLink replay, recovery and NVLink-5 error counts a GPU may add "
        "during a run (default 0; CRC errors are judged as a rate, 100/s).",
    )
    pcie_samples: Count | None = Field(
        None,
        description="Samples under load with the PCIe link below its rate tolerated in a run "
        "(default 1: load ramping up).",
    )
    pcie_replays: Count | None = Field(
        None, description="PCIe replays tolerated in a run (default 80, DCGM's)."
    )
    allow_processes: bool = Field(
        False, description="Processes already holding GPU memory only warn (a shared GPU)."
    )
    allow_env: tuple[EnvKey, ...] = Field(
        (),
        description="Variables that distort a measurement (CUDA_LAUNCH_BLOCKING, ...) "
        "accepted on purpose.",
    )
    persistence: Persistence = Field(
        "any", description="required: persistence mode off fails gpu.inventory."
    )

    @model_validator(mode="after")
    def _xid_lists_apart(self) -> GpuExpectations:
        both = sorted(set(self.xid_warn) & set(self.xid_fail))
        if both:
            raise FieldError(
                f"XID {', '.join(map(str, both))} is in both xid_warn and xid_fail",
                "list each XID in one of them",
            )
        return self

    def given(self) -> dict[str, object]:
        """The expectations envkit.yaml states; for the rest, the checks' own rules apply."""
        return self.model_dump(exclude_unset=True)


class Verify(Strict):
    """What `envkit verify` demands of the environment."""

    require_gpu: bool | None = Field(None, description="Default: true unless runtime.gpus is none.")
    expected_gpus: Count | None = Field(
        None, le=MAX_GPUS, description="Fewer visible GPUs is a failure."
    )
    min_shm: ShmSize = Field(DEFAULT_MIN_SHM, description="Smallest acceptable /dev/shm.")
    thresholds: dict[ThresholdId, PeakFraction] = Field(
        default_factory=dict, description="Check id -> minimum fraction of the GPU's peak."
    )
    checks_dir: AnyPath | None = Field(None, description="Directory of your own pytest checks.")
    gpu: GpuExpectations = Field(
        GpuExpectations(), description="What the GPUs' own health checks expect at this site."
    )
    regressions: Regressions = Field(
        "fail",
        description="What `verify --baseline` does when a figure falls below its baseline: "
        "fail the run (exit 1) or only warn.",
    )
