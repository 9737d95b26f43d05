"""gpu.xid, judged after the run: NVML's XID events during it and the kernel log's lines in its
window (from this node's previous run, else the last 2 h), each by NVIDIA's catalogue
(suite/xid_rules.py), each reported once."""

from __future__ import annotations

from collections import Counter
from typing import Any, Dict, List, Optional, Tuple

from ..core import kernel_log
from ..core.context import Context
from ..core.registry import CheckFailed, Skip, check
from . import xid_rules
from .hardware import UNSUPPORTED, expectation, observations


@check(
    "gpu.xid",
    needs_torch=False,
    phase="after",
    reference="NVIDIA's XID catalogue, each XID by its resolution bucket and the catalogue's "
    "workflows (suite/xid_rules.py); the kernel log from this node's previous run",
)
def xid(ctx: Context) -> str:
    """Catches XID errors that need a reset, a reboot or support: NVML's events during the run
    (the benchmarks provoke faults) and the kernel log since this node's previous run (else
    its last 2 h), each reported once. Application-class and ignorable XIDs are recorded and
    warned about, never failed."""
    record = observations(ctx)
    kernel = record.get("kernel") or {"readable": False, "why": "not read", "events": []}
    listener = str(record.get("xid_listener") or "")
    # A GPU whose events NVML refused (or lost) is watched by the kernel log alone: without it,
    # unread, whether or not NVML watches the others.
    refused = record.get("xid_refused") or {}
    blind = [f"GPU {i} ({why})" for i, why in refused.items() if why not in UNSUPPORTED]
    if blind and not kernel.get("readable"):
        raise CheckFailed(f"NVML cannot watch the XIDs of {', '.join(blind)}; {kernel.get('why')}")
    if not listener.startswith("nvml") and not kernel.get("readable"):
        raise Skip(f"no source of XIDs here: {listener}; {kernel.get('why')}")
    events = _events(record, kernel)
    warn, fail = expectation(ctx, "xid_warn", ()), expectation(ctx, "xid_fail", ())
    live = {s["index"]: s.get("recovery_action") for s in record["after"]}
    driver = _driver_major(record.get("driver"))
    judged = xid_rules.judge(events, warn, fail, driver, live, kernel.get("driver_loaded_seq"))
    # Each XID counted per GPU and verdict (`envkit metrics` exports them by code, bucket and
    # verdict); an event whose GPU could not be told (a bus id no GPU has) has no GPU suffix.
    counts = Counter((int(e["gpu"]), int(e["xid"]), verdict) for e, verdict, _ in judged)
    for (gpu, code, verdict), count in sorted(counts.items()):
        suffix = f".gpu{gpu}" if gpu >= 0 else ""
        ctx.metric(f"xid_{code}_{verdict}{suffix}", float(count), "count")
    faults = [j for j in judged if j[1] == "fail"]
    ctx.metric("xid_faults", float(len(faults)), "events", maximum=0.0)
    where = _sources(listener, kernel, record)
    if faults:
        warned = [j for j in judged if j[1] != "fail"]
        also = f"; also (warn): {_listed(warned)}" if warned else ""
        raise CheckFailed(f"XID errors: {_listed(faults)}{also} ({where})")
    if judged:
        return f"warn: XIDs that fail nothing: {_listed(judged)} ({where})"
    return f"no XID ({where})"


def _events(record: Dict[str, Any], kernel: Dict[str, Any]) -> List[Dict[str, Any]]:
    """NVML's events and the kernel log's lines as one list; an NVML event whose line the
    kernel log also holds is judged by the line (it carries the text the workflows read)."""
    buses = {kernel_log.bus_key(str(s.get("bus_id", ""))): s["index"] for s in record["before"]}
    lines = []
    for line in kernel.get("events") or []:
        gpu = buses.get(kernel_log.bus_key(line["bus"]), -1)
        lines.append(dict(line, gpu=gpu, where="in the kernel log"))
    logged = {(e["gpu"], e["xid"]) for e in lines}
    nvml = [
        dict(e, text=None, where=f"during {e['check'] or 'start-up'}")
        for e in record["xids"]
        if (e["gpu"], e["xid"]) not in logged
    ]
    return nvml + lines


def _driver_major(version: Any) -> Optional[int]:
    try:
        return int(str(version).split(".")[0])
    except ValueError:
        return None


def _listed(judged: List[Tuple[Dict[str, Any], str, str]]) -> str:
    return "; ".join(
        f"GPU {e['gpu']}: {xid_rules.describe(int(e['xid']))} {e['where']}: {verdict} ({why})"
        for e, verdict, why in judged
    )


def _sources(listener: str, kernel: Dict[str, Any], record: Dict[str, Any]) -> str:
    if listener.startswith("nvml"):
        # the watch's note, "nvml (not on GPU i: why)", names the GPUs NVML did not watch
        listener = f"NVML events during {record['seconds']:.0f} s{listener[len('nvml') :]}"
    readable = kernel.get("readable")
    log = f"the kernel log, {kernel.get('window')}" if readable else str(kernel.get("why"))
    return f"{listener}; {log}"
