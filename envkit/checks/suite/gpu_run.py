"""gpu.*, judged after the run from what the watch saw (checks/programs/watch.py): the GPUs the
run began and ended with against the node's baseline, clocks and temperatures under load, and
processes that held the GPUs (XIDs: suite/gpu_xid.py; PCIe and NVLink: suite/gpu_links.py).
Not supported is a skip; any other reason NVML gives for a missing value is a finding; a GPU
lost mid-run is named with when."""

from __future__ import annotations

from collections import Counter
from typing import Any, Dict, List, Optional

from ..core.context import Context
from ..core.registry import CheckFailed, Skip, check
from . import gpu_rules, skus, topology
from .hardware import (
    NO_LOAD,
    cannot_read,
    expectation,
    field,
    judge_each,
    observations,
    unreadable,
    who,
)

POWER_OVER_LIMIT = 1.10  # drawn above the enforced limit by this much: sensor or limit broken


def _lost(summary: Dict[str, Any], after: Dict[str, Any]) -> Optional[str]:
    """When the GPU fell off the bus: during the run (the watch's samples say when), or after
    its last sample (what the snapshot after the run reads answers gpu_is_lost)."""
    lost = summary.get("lost")
    if lost:
        return f"lost at {lost['at_s']:.1f} s into the run, during {lost['check']} (gpu_is_lost)"
    if "gpu_is_lost" in (after.get("errors") or {}).values():
        return "lost after the run's last sample: NVML answers gpu_is_lost after the run"
    return None


@check(
    "gpu.inventory",
    needs_torch=False,
    phase="after",
    reference="NVML's own GPU list against torch's device count and the node's baseline "
    "(suite/topology.py); no GPU lost during the run; persistence mode as the site asks",
)
def inventory(ctx: Context) -> str:
    """Catches a GPU the driver lost (at the start, or mid-run, named with when) or cannot
    describe, fewer GPUs than torch sees or than this node's baseline had, a product envkit
    does not know (named), and persistence mode off where the site requires it."""
    record = observations(ctx)
    snaps, samples = record["before"], record["samples"]
    torch_count = ctx.gpu_count()
    baseline = record.get("baseline") or {}
    floor = max(torch_count, int(baseline.get("gpu_count") or 0))
    ctx.metric("gpu_count", float(len(snaps)), "gpus", minimum=float(floor))
    problems = [p for s in snaps for p in cannot_read(s, unreadable(s, ("handle", "name", "uuid")))]
    after = {a.get("index"): a for a in record.get("after") or ()}
    lost = {s["index"]: _lost(samples[s["index"]], after.get(s["index"]) or {}) for s in snaps}
    problems += [f"{who(s)}: {lost[s['index']]}" for s in snaps if lost[s["index"]]]
    # A watch that stopped saw part of the run: what the after checks judge is incomplete.
    problems += [f"the watch stopped reading the GPUs: {p}" for p in record.get("problems") or []]
    notes: List[str] = []
    if baseline:
        problems += _missing_against(baseline, snaps)
        notes += _vbios_changes(record, snaps)
    if expectation(ctx, "persistence") == "required":
        problems += [
            f"{who(s)}: persistence mode is off" for s in snaps if s.get("persistence") is False
        ]
        # required: unread for any reason (not supported too) is no reading of it
        unread = [(s, field(s, "persistence")[1]) for s in snaps if s.get("persistence") is None]
        problems += [f"{who(s)}: NVML cannot read persistence ({why})" for s, why in unread]
    if problems:
        raise CheckFailed("; ".join(problems))
    if not snaps:
        raise Skip(f"{record['backend']} lists no GPU")
    for snap in snaps:
        if snap.get("name") and skus.sku_of(snap) is None:
            device = snap.get("pci_device_id")
            shown = f"device 0x{device:04X}" if device else "no PCI device id"
            notes.append(
                f"GPU {snap['index']}: {snap['name']} ({shown}) is not in envkit's SKU table: "
                "judged by this node's baseline, not by a near name"
            )
    names = ", ".join(_described(s) for s in snaps)
    return "; ".join([f"{len(snaps)} GPU(s) through {record['backend']}: {names}", *notes])


def _described(snap: Dict[str, Any]) -> str:
    sku = skus.sku_of(snap)
    persistence = snap.get("persistence")
    state = "on" if persistence else "off" if persistence is False else "?"
    product = f" = {sku.name}" if sku else ""
    return (
        f"{snap.get('name')}{product} (VBIOS {snap.get('vbios', '?')}, persistence {state}"
        f"{', MIG' if snap.get('mig') else ''})"
    )


def _missing_against(baseline: Dict[str, Any], snaps: List[Dict[str, Any]]) -> List[str]:
    seen = {topology.gpu_key(s) for s in snaps}
    had = baseline.get("gpus") or {}
    missing = [
        f"{k} (GPU {v.get('index')}, {v.get('name')})" for k, v in had.items() if k not in seen
    ]
    problems = []
    if len(snaps) < int(baseline.get("gpu_count") or 0):
        problems.append(
            f"{len(snaps)} GPU(s), this node's baseline of {baseline.get('recorded_at', '?')} "
            f"had {baseline['gpu_count']}"
        )
    if missing:
        problems.append("GPU(s) in the baseline not seen now: " + ", ".join(missing))
    return problems


def _vbios_changes(record: Dict[str, Any], snaps: List[Dict[str, Any]]) -> List[str]:
    notes = []
    for snap in snaps:
        was = (topology.baseline_gpu(record, snap) or {}).get("vbios")
        if was and snap.get("vbios") and was != snap["vbios"]:
            notes.append(f"GPU {snap['index']}: VBIOS {was} in the baseline, {snap['vbios']} now")
    return notes


@check(
    "gpu.clocks",
    needs_torch=False,
    phase="after",
    reference="clock-event reasons sampled under load (at least 50 % busy): hardware slowdown, "
    "thermal and power brake are faults, the software power cap is normal (DCGM's health watch)",
)
def clocks(ctx: Context) -> str:
    """Catches a GPU that slowed itself under load: hardware slowdown, software or hardware
    thermal slowdown, power brake. Idle and the software power cap are normal and pass; a
    reason seen only while idle is not judged (an idle GPU's clocks are not the run's)."""
    record = observations(ctx)
    allowed = int(expectation(ctx, "throttle_samples", 0))

    def judge(snap: Dict[str, Any], index: Any, problems: List[str], notes: List[str]) -> str:
        summary = record["samples"][index]
        unread = unreadable(summary, ("reasons", "utilization"))
        problems += cannot_read(snap, unread, " during the run")
        why = summary["errors"].get("reasons") or summary["errors"].get("utilization")
        if why or not summary["loaded"]:
            return f"clock-event reasons or utilization not readable ({why})" if why else NO_LOAD
        sets = {frozenset(k.split("+")) - {""}: n for k, n in summary["loaded_reason_sets"].items()}
        reasons = sum((Counter(dict.fromkeys(k, n)) for k, n in sets.items()), Counter())
        faults = {r: n for r, n in reasons.items() if r in gpu_rules.FAULT_REASONS}
        throttled = sum(n for k, n in sets.items() if k & set(faults))
        interval = summary["interval_s"]
        ctx.metric(f"throttle_s.gpu{index}", throttled * interval, "s", maximum=allowed * interval)
        if throttled > allowed:
            listed = ", ".join(f"{r} in {n} of {summary['loaded']}" for r, n in faults.items())
            problems.append(f"GPU {index} slowed itself: {listed} samples under load")
        elif reasons.get("sw_power_cap"):
            notes.append(f"GPU {index}: at its power cap under load (normal)")
        return ""

    message = judge_each(record["before"], "index", judge, "throttling")
    loaded = sum(s["loaded"] for s in record["samples"])
    return message or f"no slowdown in {loaded} samples under load"


TEMPERATURE_LIMITS = (("gpu_max_temp", "max operating"), ("slowdown_temp", "slowdown"))


@check(
    "gpu.thermal",
    needs_torch=False,
    phase="after",
    reference="each GPU's own max operating temperature (NVML; its slowdown temperature where "
    "there is none, as DCGM's diag falls back; a GB10 gives only the first) and HBM's against the "
    f"memory's, and the enforced power limit (+{POWER_OVER_LIMIT - 1:.0%}: drawing at the limit "
    "is normal capping)",
)
def thermal(ctx: Context) -> str:
    """Catches a GPU or its HBM past its own max operating temperature during the run
    (cooling), a temperature or limit that cannot be read, and a GPU drawing well above its
    enforced power limit (a broken sensor or limit)."""
    record = observations(ctx)

    def judge(snap: Dict[str, Any], first: Any, problems: List[str], notes: List[str]) -> str:
        gpu = snap["index"]
        summary = record["samples"][gpu]
        unread = unreadable(
            summary, ("temperature", "memory_temperature", "power_w", "power_limit_w")
        )
        unread += unreadable(snap, [*(n for n, _ in TEMPERATURE_LIMITS), "memory_max_temp"])
        problems += cannot_read(snap, unread)
        limit, named = next(
            ((snap[n], said) for n, said in TEMPERATURE_LIMITS if snap.get(n)), ("", "")
        )
        if not limit:  # the unreadable ones are problems above
            return "neither its max operating nor its slowdown temperature is supported"
        if summary.get("max_temperature") is None:  # the run's heat unread: nothing judged
            why = summary["errors"].get("temperature", "no sample")
            return f"its temperature was not read during the run ({why})"
        hottest = max(t for t in (summary.get("max_temperature"), first) if t is not None)
        ctx.metric(f"temperature_max.gpu{gpu}", float(hottest), "C", maximum=float(limit))
        if hottest > limit:
            problems.append(
                f"{who(snap)}: reached {hottest} C, above its {named} temperature {limit} C"
            )
        said = _memory_heat(ctx, snap, summary, problems) + _power(ctx, snap, summary, problems)
        end = summary.get("end_temperature")
        notes.append(
            f"GPU {gpu}: max {hottest} C ({named} {limit} C){said}"
            + (f", {end} C at the end of the load" if end else "")
        )
        return ""

    return judge_each(record["before"], "temperature", judge, "temperature")


def _memory_heat(
    ctx: Context, snap: Dict[str, Any], summary: Dict[str, Any], problems: List[str]
) -> str:
    limit = snap.get("memory_max_temp") or summary.get("memory_max_temp")
    hottest = summary.get("max_memory_temperature")
    if hottest is None or not limit:
        return ""
    ctx.metric(
        f"memory_temperature_max.gpu{snap['index']}", float(hottest), "C", maximum=float(limit)
    )
    if hottest > limit:
        problems.append(f"{who(snap)}: HBM reached {hottest} C, above its max operating {limit} C")
    return f", HBM max {hottest} C (max operating {limit} C)"


def _power(ctx: Context, snap: Dict[str, Any], summary: Dict[str, Any], problems: List[str]) -> str:
    power = summary.get("max_power_w")
    cap = summary.get("power_limit_w") or snap.get("power_limit_w")
    if power is None or not cap:
        return ", power not judged (not readable)"
    share = power / cap
    ctx.metric(f"power_of_limit.gpu{snap['index']}", share, "fraction", maximum=POWER_OVER_LIMIT)
    if share > POWER_OVER_LIMIT:
        problems.append(f"{who(snap)}: drew {power:.0f} W against a {cap:.0f} W limit")
    return ""


@check(
    "gpu.processes",
    needs_torch=False,
    phase="after",
    reference="no compute process holding GPU memory when the run began (DCGM's diag precondition)",
)
def processes(ctx: Context) -> str:
    """Catches processes that already held GPU memory before the suite started: another job
    shares the GPU, so every figure is wrong and the GPU is not free."""
    record = observations(ctx)
    allow = bool(expectation(ctx, "allow_processes", False))

    def judge(snap: Dict[str, Any], found: Any, problems: List[str], notes: List[str]) -> None:
        most = None if allow else 0.0
        ctx.metric(f"processes.gpu{snap['index']}", float(len(found)), "count", maximum=most)
        if not found:
            return
        listed = ", ".join(f"pid {p['pid']} ({p['used_bytes'] / 2**20:.0f} MiB)" for p in found)
        (notes if allow else problems).append(f"{who(snap)}: held before the run by {listed}")

    message = judge_each(record["before"], "processes", judge, "the GPU's process list")
    return message or "no process held GPU memory when the run began"
