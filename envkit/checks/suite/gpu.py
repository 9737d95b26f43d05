"""gpu.*, read in their turn: the GPU hardware's own state, the DCGM class: memory errors and
what the driver says must be done about them (the recovery action), the InfoROM, the NVSwitch
fabric and its health, and the environment. What the watch saw during the run is judged after
it (suite/gpu_run.py). Anything the GPU or driver does not support is a skip with the reason,
never a pass; any other reason NVML gives for a missing value is a finding. Rules and their
sources: suite/gpu_rules.py, suite/skus.py, suite/xid_rules.py and docs/gpu-health.md."""

from __future__ import annotations

import os
from typing import Any, Dict, List

from ..core.context import Context
from ..core.nvml_read import ECC_COUNTERS
from ..core.registry import CheckFailed, check
from . import gpu_rules
from .hardware import cannot_read, expectation, judge_each, snapshots, unreadable, who

RETIRED_PAGES_LIMIT = 60  # NVIDIA's replacement criterion for page retirement (pre-Ampere)
ROW_REMAP_UNCORRECTABLE_WARN = 512  # DCGM_LIMIT_MAX_ROW_REMAP_UNCORRECTABLE: the health watch warns


@check(
    "gpu.ecc",
    needs_torch=False,
    reference="zero volatile uncorrectable ECC errors (DCGM's memory health rule); the SRAM "
    "error threshold of NVIDIA's field diagnostic (DCGM's diag warns)",
)
def ecc(ctx: Context) -> str:
    """Catches uncorrectable (double-bit) ECC errors since the driver loaded, and a counter
    that cannot be read; records the aggregate counts, so `envkit history diff` shows a rising
    correctable count; warns when the SRAM error threshold was passed."""
    _, snaps = snapshots(ctx)

    def judge(snap: Dict[str, Any], enabled: Any, problems: List[str], notes: List[str]) -> str:
        if not enabled:
            return "disabled (nvidia-smi -e 1 turns it on)"
        gpu = snap["index"]
        counters = [f"ecc_{name}" for name, _, _ in ECC_COUNTERS]
        unread = unreadable(snap, [*counters, "sram_threshold_exceeded"])
        problems.extend(f"{who(snap)}: NVML cannot read {u}" for u in unread)
        uncorrected = snap.get("ecc_volatile_uncorrected")
        if uncorrected is None:
            return "its volatile counter not readable"
        ctx.metric(f"ecc_volatile_uncorrected.gpu{gpu}", float(uncorrected), "errors", maximum=0.0)
        for name in ("aggregate_corrected", "aggregate_uncorrected"):
            if snap.get(f"ecc_{name}") is not None:
                ctx.metric(f"ecc_{name}.gpu{gpu}", float(snap[f"ecc_{name}"]), "count")
        if uncorrected:
            problems.append(
                f"{who(snap)}: {uncorrected} uncorrectable ECC error(s) since the driver loaded"
            )
        if snap.get("sram_threshold_exceeded"):
            notes.append(
                f"warn: {who(snap)}: the SRAM ECC error threshold is exceeded "
                "(run NVIDIA's field diagnostic)"
            )
        return ""

    return judge_each(snaps, "ecc_mode", judge, "ECC") or "no uncorrectable ECC errors"


@check(
    "gpu.row_remap",
    needs_torch=False,
    reference="no remapping pending and none failed (NVIDIA's row remapping guide; DCGM r1); "
    f"{ROW_REMAP_UNCORRECTABLE_WARN}+ uncorrectable remaps warn and unrepairable memory fails "
    "(DCGM's health watch)",
)
def row_remap(ctx: Context) -> str:
    """Catches a row remapping that waits for a GPU reset, one that failed, and memory the
    driver flags as unrepairable (the GPU needs replacing); warns at 512 uncorrectable remaps.
    Ampere and later; older GPUs retire pages instead (gpu.retired_pages)."""
    _, snaps = snapshots(ctx)

    def judge(snap: Dict[str, Any], rows: Any, problems: List[str], notes: List[str]) -> None:
        gpu = snap["index"]
        ctx.metric(f"remap_pending.gpu{gpu}", float(rows["pending"]), "flag", maximum=0.0)
        ctx.metric(f"remap_failed.gpu{gpu}", float(rows["failed"]), "flag", maximum=0.0)
        ctx.metric(f"remapped_rows_uncorrectable.gpu{gpu}", float(rows["uncorrected"]), "count")
        if rows["failed"]:
            problems.append(f"{who(snap)}: row remapping failed: the GPU needs replacing")
        if rows["pending"]:
            problems.append(
                f"{who(snap)}: row remapping pending ({rows['uncorrected']} uncorrectable rows): "
                "reset the GPU (nvidia-smi -r) or reboot"
            )
        if rows["uncorrected"] >= ROW_REMAP_UNCORRECTABLE_WARN:
            notes.append(
                f"warn: {who(snap)}: {rows['uncorrected']} rows remapped for uncorrectable "
                f"errors (DCGM warns from {ROW_REMAP_UNCORRECTABLE_WARN})"
            )
        if snap.get("unrepairable_memory"):
            problems.append(f"{who(snap)}: the driver flags its memory unrepairable: replace it")
        problems += cannot_read(snap, unreadable(snap, ["unrepairable_memory"]))

    return judge_each(snaps, "remapped_rows", judge, "row remapping") or "no remapping pending"


@check(
    "gpu.retired_pages",
    needs_torch=False,
    reference=f"no retirement pending and fewer than {RETIRED_PAGES_LIMIT} pages retired "
    "(NVIDIA's page retirement guide)",
)
def retired_pages(ctx: Context) -> str:
    """Catches a page retirement waiting for a reset, and a GPU past the retirement limit
    (pre-Ampere GPUs; Ampere and later remap rows instead)."""
    _, snaps = snapshots(ctx)

    def judge(snap: Dict[str, Any], pages: Any, problems: List[str], notes: List[str]) -> None:
        total = int(pages["sbe"]) + int(pages["dbe"])
        limit = float(RETIRED_PAGES_LIMIT - 1)
        ctx.metric(f"retired_pages.gpu{snap['index']}", float(total), "pages", maximum=limit)
        if pages["pending"]:
            problems.append(f"{who(snap)}: a page retirement is pending: reset the GPU or reboot")
        if total >= RETIRED_PAGES_LIMIT:
            problems.append(
                f"{who(snap)}: {total} pages retired (replace at {RETIRED_PAGES_LIMIT})"
            )

    instead = "; Ampere and later GPUs remap rows instead (gpu.row_remap)"
    message = judge_each(snaps, "retired_pages", judge, "page retirement", instead)
    return message or "no retirement pending"


@check(
    "gpu.recovery",
    needs_torch=False,
    reference="the driver's GPU recovery action (NVML_FI_DEV_GET_GPU_RECOVERY_ACTION, R570 on): "
    "reset, reboot or drain-and-reset required fail, drain P2P warns (DCGM's health watch)",
)
def recovery(ctx: Context) -> str:
    """Catches a GPU the driver itself says needs a reset, the node a reboot, or its peers a
    drain: the summary of every XID's recovery, as XID 154 reports it."""
    from .xid_rules import RECOVERY_ACTIONS

    _, snaps = snapshots(ctx)

    def judge(snap: Dict[str, Any], action: Any, problems: List[str], notes: List[str]) -> None:
        name, verdict = RECOVERY_ACTIONS.get(int(action), (f"unknown action {action}", "fail"))
        required = 1.0 if verdict == "fail" else 0.0  # reset, reboot, drain and reset, unknown
        ctx.metric(f"recovery_required.gpu{snap['index']}", required, "flag", maximum=0.0)
        if verdict == "fail":
            problems.append(f"{who(snap)}: the driver's recovery action is {name}")
        elif int(action):
            notes.append(f"warn: {who(snap)}: the driver's recovery action is {name}")

    message = judge_each(snaps, "recovery_action", judge, "the GPU recovery action")
    return message or "no GPU needs a recovery action"


@check("gpu.inforom", reference="NVML's InfoROM checksum validation", needs_torch=False)
def inforom(ctx: Context) -> str:
    """Catches a corrupted InfoROM (the board's own record of ECC and configuration)."""
    _, snaps = snapshots(ctx)
    bad = [who(s) for s in snaps if (s.get("errors") or {}).get("inforom") == "corrupted_inforom"]
    if bad:
        raise CheckFailed(f"InfoROM corrupted on {', '.join(bad)}: the board needs service")
    # Each GPU's value is its validation: a valid one adds nothing to judge.
    return judge_each(snaps, "inforom", lambda *_: None, "InfoROM validation") or "InfoROM valid"


FABRIC_STATES = {1: "not started", 2: "in progress", 3: "completed"}
# nvmlGpuFabricInfo_v2/v3 healthMask fields (shift, width): value 1 is TRUE (the fault).
FABRIC_HEALTH = (
    ("bandwidth degraded", 0, 0x3),
    ("route recovery in progress", 2, 0x3),
    ("route unhealthy", 4, 0x3),
    ("access-timeout recovery in progress", 6, 0x3),
)
FABRIC_CONFIGURATION = {
    2: "incorrect system GUID",
    3: "incorrect chassis serial number",
    4: "no partition",
    5: "insufficient NVLinks",
    6: "incompatible GPU firmware",
    7: "invalid location",
    8: "GPU state invalid",
}


def _fabric_health(mask: Any) -> List[str]:
    """What the fabric manager's health mask reports wrong (nothing without a mask)."""
    if mask is None:
        return []
    found = [
        f"the fabric manager reports {name}"
        for name, shift, width in FABRIC_HEALTH
        if (int(mask) >> shift) & width == 1
    ]
    configured = (int(mask) >> 8) & 0xF
    if configured in FABRIC_CONFIGURATION:
        found.append(f"fabric configuration: {FABRIC_CONFIGURATION[configured]}")
    return found


@check(
    "gpu.fabric",
    needs_torch=False,
    reference="NVML's fabric state: registration completed with success, and the fabric "
    "manager's health mask clean (DCGM's MonitorFabricFields; NVSwitch systems)",
)
def fabric(ctx: Context) -> str:
    """Catches a GPU that did not join the NVSwitch fabric (fabric manager down or failed), and
    a fabric the manager reports degraded, unhealthy, recovering or wrongly configured: NCCL
    then falls back to slow paths or hangs."""
    _, snaps = snapshots(ctx)

    def judge(snap: Dict[str, Any], value: Any, problems: List[str], notes: List[str]) -> str:
        state, status = int(value["state"]), int(value["status"])
        if state == 0:
            return "no NVSwitch fabric"
        if state == 2:  # DCGM warns: registration is under way
            notes.append(f"warn: {who(snap)}: fabric registration in progress")
        elif state != 3:
            problems.append(
                f"{who(snap)}: fabric registration {FABRIC_STATES.get(state, state)} "
                "(is nvidia-fabricmanager running?)"
            )
        elif status != 0:
            problems.append(f"{who(snap)}: fabric registration completed with error {status}")
        problems.extend(f"{who(snap)}: {said}" for said in _fabric_health(value.get("health_mask")))
        return ""

    message = judge_each(snaps, "fabric", judge, "NVSwitch fabric")
    return message or "every GPU registered with the fabric, its health clean"


@check(
    "gpu.cuda_env",
    needs_torch=False,
    reference="a documented list of variables that change what is measured, each judged by its "
    "meaning (suite/gpu_rules.py)",
)
def cuda_env(ctx: Context) -> str:
    """Catches profiler, debugger and override variables (CUDA_LAUNCH_BLOCKING=1, an injected
    profiler, NVIDIA_TF32_OVERRIDE=0, MPS limits) that make every figure of the run wrong."""
    found = gpu_rules.distorting_env(dict(os.environ), expectation(ctx, "allow_env", ()))
    if found:
        raise CheckFailed(
            "set in this environment, distorting the run: "
            + "; ".join(found)
            + " (unset them, or list them in verify.gpu.allow_env)"
        )
    return "none of the variables that distort a measurement is set"
