"""gpu.*: the GPU hardware's own health, the DCGM class: memory errors, the InfoROM, the NVSwitch
fabric and the environment read in their turn; XID events, clocks and PCIe under load, NVLink
counters, temperatures and processes judged after the run from what the watch saw
(checks/programs/watch.py). Anything the GPU or driver does not support is a skip with the
reason, never a pass. Rules and their sources: suite/gpu_rules.py and docs/gpu-health.md."""

from __future__ import annotations

import os
import re
from typing import Any, Dict, List, Tuple

from ..core.context import Context
from ..core.registry import CheckFailed, Skip, check
from . import gpu_rules
from .hardware import expectation, field, judge_each, observations, snapshots, who

RETIRED_PAGES_LIMIT = 60  # NVIDIA's replacement criterion for page retirement (pre-Ampere)
PCIE_REPLAYS_LIMIT = 80  # DCGM's pcie test: replays tolerated during one run
POWER_OVER_LIMIT = 1.10  # drawn above the enforced limit by this much: sensor or limit broken
KMSG = "/dev/kmsg"  # the kernel log; tests point it elsewhere (a plant), never at the host's
KERNEL_XID = re.compile(r"NVRM: Xid \(PCI:([0-9A-Fa-f:.]+)\): (\d+)")


@check(
    "gpu.inventory",
    reference="NVML's own GPU list against torch's device count; persistence mode as the "
    "site asks (verify.gpu.persistence)",
)
def inventory(ctx: Context) -> str:
    """Catches a GPU the driver lost or cannot describe, fewer GPUs than torch sees, and
    persistence mode off where the site requires it."""
    backend, snaps = snapshots(ctx)
    torch_count = ctx.gpu_count()
    ctx.metric("gpu_count", float(len(snaps)), "gpus", minimum=float(torch_count))
    problems = [
        f"{who(s)}: {field}: {why}"
        for s in snaps
        for field, why in (s.get("errors") or {}).items()
        if field in ("handle", "name", "uuid") and why not in ("not_supported",)
    ]
    if expectation(ctx, "persistence") == "required":
        problems += [
            f"{who(s)}: persistence mode is off" for s in snaps if s.get("persistence") is False
        ]
    if problems:
        raise CheckFailed("; ".join(problems))
    if not snaps:
        raise Skip(f"{backend} lists no GPU")
    names = ", ".join(
        f"{s.get('name')} (VBIOS {s.get('vbios', '?')}, persistence "
        f"{'on' if s.get('persistence') else 'off' if s.get('persistence') is False else '?'}"
        f"{', MIG' if s.get('mig') else ''})"
        for s in snaps
    )
    return f"{len(snaps)} GPU(s) through {backend}: {names}"


@check(
    "gpu.ecc",
    reference="zero volatile uncorrectable ECC errors (DCGM's memory health rule)",
)
def ecc(ctx: Context) -> str:
    """Catches uncorrectable (double-bit) ECC errors since the driver loaded; records the
    aggregate counts, so `envkit history diff` shows a rising correctable count."""
    _, snaps = snapshots(ctx)

    def judge(snap: Dict[str, Any], enabled: Any, problems: List[str], notes: List[str]) -> None:
        if not enabled:
            notes.append(f"GPU {snap['index']}: ECC is disabled (nvidia-smi -e 1 turns it on)")
            return
        gpu = snap["index"]
        uncorrected = int(snap.get("ecc_volatile_uncorrected") or 0)
        ctx.metric(f"ecc_volatile_uncorrected.gpu{gpu}", float(uncorrected), "errors", maximum=0.0)
        for name in ("aggregate_corrected", "aggregate_uncorrected"):
            if snap.get(f"ecc_{name}") is not None:
                ctx.metric(f"ecc_{name}.gpu{gpu}", float(snap[f"ecc_{name}"]), "count")
        if uncorrected:
            problems.append(
                f"{who(snap)}: {uncorrected} uncorrectable ECC error(s) since the driver loaded"
            )

    return judge_each(snaps, "ecc_mode", judge, "ECC") or "no uncorrectable ECC errors"


@check(
    "gpu.row_remap",
    reference="no remapping pending and none failed (NVIDIA's row remapping guide; DCGM r1)",
)
def row_remap(ctx: Context) -> str:
    """Catches a row remapping that waits for a GPU reset, and one that failed (the GPU needs
    replacing). Ampere and later; older GPUs retire pages instead (gpu.retired_pages)."""
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

    return judge_each(snaps, "remapped_rows", judge, "row remapping") or "no remapping pending"


@check(
    "gpu.retired_pages",
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


@check("gpu.inforom", reference="NVML's InfoROM checksum validation")
def inforom(ctx: Context) -> str:
    """Catches a corrupted InfoROM (the board's own record of ECC and configuration)."""
    _, snaps = snapshots(ctx)
    bad = [who(s) for s in snaps if (s.get("errors") or {}).get("inforom") == "corrupted_inforom"]
    if bad:
        raise CheckFailed(f"InfoROM corrupted on {', '.join(bad)}: the board needs service")

    def judge(snap: Dict[str, Any], value: Any, problems: List[str], notes: List[str]) -> None:
        """Valid: nothing to add."""

    return judge_each(snaps, "inforom", judge, "InfoROM validation") or "InfoROM valid"


FABRIC_STATES = {1: "not started", 2: "in progress", 3: "completed"}


@check(
    "gpu.fabric",
    reference="NVML's fabric state: registration completed with success (NVSwitch systems)",
)
def fabric(ctx: Context) -> str:
    """Catches a GPU that did not join the NVSwitch fabric (fabric manager down or failed):
    NCCL then falls back to slow paths or hangs."""
    _, snaps = snapshots(ctx)

    def judge(snap: Dict[str, Any], value: Any, problems: List[str], notes: List[str]) -> None:
        state, status = int(value["state"]), int(value["status"])
        if state == 0:
            snap.setdefault("errors", {})["fabric"] = "not_supported"
            notes.append(f"GPU {snap['index']}: no NVSwitch fabric")
        elif state != 3:
            problems.append(
                f"{who(snap)}: fabric registration {FABRIC_STATES.get(state, state)} "
                "(is nvidia-fabricmanager running?)"
            )
        elif status != 0:
            problems.append(f"{who(snap)}: fabric registration completed with error {status}")

    message = judge_each(snaps, "fabric", judge, "NVSwitch fabric")
    if all((s.get("errors") or {}).get("fabric") == "not_supported" for s in snaps):
        raise Skip("no GPU here is attached to an NVSwitch fabric")
    return message or "every GPU registered with the fabric"


@check(
    "gpu.cuda_env",
    reference="a documented list of variables that change what is measured (suite/gpu_rules.py)",
)
def cuda_env(ctx: Context) -> str:
    """Catches profiler, debugger and override variables (CUDA_LAUNCH_BLOCKING, an injected
    profiler, NVIDIA_TF32_OVERRIDE, MPS limits) that make every figure of the run wrong."""
    found = gpu_rules.distorting_env(dict(os.environ), expectation(ctx, "allow_env", ()))
    if found:
        raise CheckFailed(
            "set in this environment, distorting the run: "
            + "; ".join(found)
            + " (unset them, or list them in verify.gpu.allow_env)"
        )
    return "none of the variables that distort a measurement is set"


# ---------------------------------------------------------------- judged after the run


@check(
    "gpu.xid",
    phase="after",
    reference="NVIDIA's Xid catalogue, application-caused ones warn-only (suite/gpu_rules.py)",
)
def xid(ctx: Context) -> str:
    """Catches XID errors: NVML's events during the whole run (the benchmarks provoke faults),
    and the kernel log where it is readable."""
    record = observations(ctx)
    seen = [(e["gpu"], e["xid"], f"during {e['check'] or 'start-up'}") for e in record["xids"]]
    kernel, kernel_note = _kernel_xids(record)
    seen += kernel
    listener = str(record.get("xid_listener") or "")
    if not listener.startswith("nvml") and kernel_note:
        raise Skip(f"no source of XIDs here: {listener}; {kernel_note}")
    warn, fail = expectation(ctx, "xid_warn", ()), expectation(ctx, "xid_fail", ())
    counts: Dict[int, int] = {}
    for _, code, _ in seen:
        counts[code] = counts.get(code, 0) + 1
    for code, count in sorted(counts.items()):
        ctx.metric(f"xid_{code}", float(count), "count")
    faults = [s for s in seen if gpu_rules.xid_class(s[1], warn, fail) == "fail"]
    ctx.metric("xid_faults", float(len(faults)), "events", maximum=0.0)
    listed = "; ".join(f"GPU {g}: {gpu_rules.xid_text(c)} {where}" for g, c, where in seen)
    if faults:
        raise CheckFailed(f"XID errors: {listed}")
    sources = ", ".join(s for s in (listener, "" if kernel_note else "kernel log") if s)
    note = f" ({kernel_note})" if kernel_note else ""
    if seen:
        return f"only application-caused XIDs (warn): {listed}; watched by {sources}{note}"
    return f"no XID during {record['seconds']:.0f} s, watched by {sources}{note}"


def _kernel_xids(record: Dict[str, Any]) -> Any:
    """XIDs in the kernel log since boot, and why the log could not be read (or "")."""
    try:
        fd = os.open(KMSG, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        return [], f"kernel log not readable ({exc.strerror}: needs CAP_SYSLOG in a container)"
    lines: List[str] = []
    try:
        while True:
            try:
                chunk = os.read(fd, 8192)
            except BlockingIOError:
                break
            except OSError:  # EPIPE: records overwritten while reading; go on
                continue
            if not chunk:
                break
            lines.append(chunk.decode("utf-8", "replace"))
    finally:
        os.close(fd)
    buses = {_bus_key(str(s.get("bus_id", ""))): s["index"] for s in record["before"]}
    found = []
    for match in KERNEL_XID.finditer("".join(lines)):
        gpu = buses.get(_bus_key(match.group(1)), -1)
        found.append((gpu, int(match.group(2)), "in the kernel log"))
    return found, ""


def _bus_key(text: str) -> Tuple[object, ...]:
    """(domain, bus, device) from NVML's 00000000:3B:00.0 and the kernel's 0000:3b:00 alike."""
    parts = re.split(r"[:.]", text.strip())
    try:
        return tuple(int(p, 16) for p in parts[:3])
    except ValueError:
        return (text,)


@check(
    "gpu.clocks",
    phase="after",
    reference="clock-event reasons sampled during the run: hardware slowdown, thermal and power "
    "brake are faults, the software power cap is normal (DCGM's health watch)",
)
def clocks(ctx: Context) -> str:
    """Catches a GPU that slowed itself during the run: hardware slowdown, software or hardware
    thermal slowdown, power brake. Idle and the software power cap are normal and pass."""
    record = observations(ctx)
    allowed = int(expectation(ctx, "throttle_samples", 0))
    problems, notes, unsupported = [], [], []
    for index, summary in enumerate(record["samples"]):
        if summary["errors"].get("reasons") and not summary["reasons"]:
            unsupported.append(f"GPU {index} ({summary['errors']['reasons']})")
            continue
        faults = {r: n for r, n in summary["reasons"].items() if r in gpu_rules.FAULT_REASONS}
        seconds = sum(faults.values()) * summary["interval_s"]
        ctx.metric(f"throttle_s.gpu{index}", seconds, "s", maximum=allowed * summary["interval_s"])
        if sum(faults.values()) > allowed:
            listed = ", ".join(
                f"{r} in {n} of {summary['samples']} samples" for r, n in faults.items()
            )
            problems.append(f"GPU {index} slowed itself: {listed}")
        elif summary["loaded"] and summary["reasons"].get("sw_power_cap"):
            notes.append(f"GPU {index}: at its power cap under load (normal)")
    if problems:
        raise CheckFailed("; ".join(problems))
    if unsupported and len(unsupported) == len(record["samples"]):
        raise Skip(f"clock-event reasons not readable on {', '.join(unsupported)}")
    if not any(s["loaded"] for s in record["samples"]):
        raise Skip(
            "the GPUs were not loaded during this run (--no-bench, no --stress): clocks "
            "under load were not observed"
        )
    loaded = sum(s["loaded"] for s in record["samples"])
    return "; ".join(notes) or f"no slowdown in {loaded} samples under load"


@check(
    "gpu.pcie",
    phase="after",
    reference="each GPU's own maximum link generation and width (or verify.gpu.pcie_gen/width), "
    f"and at most {PCIE_REPLAYS_LIMIT} replays in a run (DCGM's pcie test)",
)
def pcie(ctx: Context) -> str:
    """Catches a PCIe link trained narrower or slower than it can be under load (a loose card,
    a bad riser), and a link replaying packets during the run."""
    record = observations(ctx)
    want_gen, want_width = expectation(ctx, "pcie_gen"), expectation(ctx, "pcie_width")
    limit = int(expectation(ctx, "pcie_replays", PCIE_REPLAYS_LIMIT))

    def judge(snap: Dict[str, Any], width: Any, problems: List[str], notes: List[str]) -> None:
        gpu = snap["index"]
        summary = record["samples"][gpu]
        expected_width = want_width or snap.get("pcie_max_width") or width
        seen_width = min(width, summary.get("min_pcie_width") or width)
        ctx.metric(
            f"pcie_width.gpu{gpu}",
            float(seen_width),
            "lanes",
            peak=float(expected_width),
            threshold=1.0,
        )
        if seen_width < expected_width:
            problems.append(f"{who(snap)}: PCIe link x{seen_width}, expected x{expected_width}")
        loaded_gen = summary.get("max_pcie_gen_loaded")
        expected_gen = want_gen or snap.get("pcie_max_gen")
        if loaded_gen is None or not expected_gen:
            notes.append(f"GPU {gpu}: generation not judged (no load seen; idle links train down)")
        else:
            ctx.metric(
                f"pcie_gen.gpu{gpu}",
                float(loaded_gen),
                "gen",
                peak=float(expected_gen),
                threshold=1.0,
            )
            if loaded_gen < expected_gen:
                problems.append(
                    f"{who(snap)}: PCIe Gen{loaded_gen} under load, expected Gen{expected_gen}"
                )
        _replays(snap, record["after"][gpu], limit, problems)

    message = judge_each(record["before"], "pcie_width", judge, "PCIe link")
    return message or "every link at its width and generation"


def _replays(
    before: Dict[str, Any], after: Dict[str, Any], limit: int, problems: List[str]
) -> None:
    first, _ = field(before, "pcie_replays")
    last, _ = field(after, "pcie_replays")
    if first is None or last is None:
        return
    rose = int(last) - int(first)
    if rose > limit:
        problems.append(f"{who(before)}: {rose} PCIe replays during the run (at most {limit})")


@check(
    "gpu.nvlink",
    phase="after",
    reference="each SKU's NVLink count (suite/gpu_rules.py, or verify.gpu.nvlinks); error "
    "counters that must not rise during the run (DCGM's NVLink health watch)",
)
def nvlink(ctx: Context) -> str:
    """Catches NVLinks down (fewer active than the board has) and links whose CRC, replay or
    recovery counters rose during the run."""
    record = observations(ctx)
    configured = expectation(ctx, "nvlinks")
    tolerance = int(expectation(ctx, "nvlink_errors", 0))

    def judge(snap: Dict[str, Any], links: Any, problems: List[str], notes: List[str]) -> None:
        gpu = snap["index"]
        active = [link for link in links if link["active"]]
        allowed = gpu_rules.expected_nvlinks(str(snap.get("name", "")), configured)
        floor = float(min(allowed)) if allowed else 0.0
        ctx.metric(f"nvlinks_active.gpu{gpu}", float(len(active)), "links", minimum=floor)
        if allowed is not None and len(active) not in allowed:
            wanted = " or ".join(str(n) for n in sorted(allowed, reverse=True))
            problems.append(f"{who(snap)}: {len(active)} NVLinks active, expected {wanted}")
        rose = _nvlink_rises(links, record["after"][gpu])
        ctx.metric(
            f"nvlink_errors.gpu{gpu}", float(sum(rose.values())), "count", maximum=float(tolerance)
        )
        if sum(rose.values()) > tolerance:
            listed = ", ".join(f"{k} +{v}" for k, v in sorted(rose.items()))
            problems.append(f"{who(snap)}: NVLink error counters rose during the run: {listed}")
        if not active and allowed is None:
            notes.append(f"GPU {gpu}: no NVLink active")

    message = judge_each(record["before"], "nvlinks", judge, "NVLink")
    return message or "every NVLink up, no error counter rose"


def _nvlink_rises(before: List[Dict[str, Any]], after_snap: Dict[str, Any]) -> Dict[str, int]:
    after = {link["link"]: link for link in (after_snap.get("nvlinks") or [])}
    rose: Dict[str, int] = {}
    for link in before:
        later = after.get(link["link"], {})
        for name in ("replay", "recovery", "crc_flit", "crc_data"):
            first, last = link.get(name), later.get(name)
            if first is not None and last is not None and last > first:
                rose[f"link {link['link']} {name}"] = int(last - first)
    return rose


@check(
    "gpu.thermal",
    phase="after",
    reference="each GPU's own slowdown temperature (NVML) and its enforced power limit "
    f"(+{POWER_OVER_LIMIT - 1:.0%}: drawing at the limit is normal capping)",
)
def thermal(ctx: Context) -> str:
    """Catches a GPU that reached its own slowdown temperature during the run (cooling), and
    one drawing well above its enforced power limit (a broken sensor or limit)."""
    record = observations(ctx)

    def judge(snap: Dict[str, Any], limit: Any, problems: List[str], notes: List[str]) -> None:
        gpu = snap["index"]
        summary = record["samples"][gpu]
        hottest = max(summary.get("max_temperature") or 0, snap.get("temperature") or 0)
        ctx.metric(f"temperature_max.gpu{gpu}", float(hottest), "C", maximum=float(limit) - 1)
        if hottest >= limit:
            problems.append(
                f"{who(snap)}: reached {hottest} C, its slowdown temperature is {limit} C"
            )
        power, cap = (
            summary.get("max_power_w"),
            summary.get("power_limit_w") or snap.get("power_limit_w"),
        )
        if power is not None and cap:
            share = power / cap
            ctx.metric(f"power_of_limit.gpu{gpu}", share, "fraction", maximum=POWER_OVER_LIMIT)
            if share > POWER_OVER_LIMIT:
                problems.append(f"{who(snap)}: drew {power:.0f} W against a {cap:.0f} W limit")
        end = summary.get("end_temperature")
        notes.append(
            f"GPU {gpu}: max {hottest} C (slowdown {limit} C)"
            + (f", {end} C at the end of the load" if end else "")
        )

    return judge_each(record["before"], "slowdown_temp", judge, "temperature limits")


@check(
    "gpu.processes",
    phase="after",
    reference="no compute process holding GPU memory when the run began (DCGM's diag precondition)",
)
def processes(ctx: Context) -> str:
    """Catches processes that already held GPU memory before the suite started: another job
    shares the GPU, so every figure is wrong and the GPU is not free."""
    record = observations(ctx)
    allow = bool(expectation(ctx, "allow_processes", False))

    def judge(snap: Dict[str, Any], found: Any, problems: List[str], notes: List[str]) -> None:
        ctx.metric(
            f"processes.gpu{snap['index']}",
            float(len(found)),
            "count",
            maximum=None if allow else 0.0,
        )
        if not found:
            return
        listed = ", ".join(f"pid {p['pid']} ({p['used_bytes'] / 2**20:.0f} MiB)" for p in found)
        line = f"{who(snap)}: held before the run by {listed}"
        (notes if allow else problems).append(line)

    message = judge_each(record["before"], "processes", judge, "the GPU's process list")
    return message or "no process held GPU memory when the run began"
