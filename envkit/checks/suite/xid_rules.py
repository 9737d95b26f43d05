"""XID verdicts from NVIDIA's catalogue (xid_catalogue.json beside this module, generated from
the workbook by scripts/gen_xid_table.py): each XID's resolution bucket decides, a site's lists
(verify.gpu.xid_warn / xid_fail) win, and the catalogue's own workflows are followed where a
line carries what they need: XID 154 by the recovery action it names, NVLink-5 XIDs 144-150 by
the decode sheet, XID 45 by whether another XID came with it, an application-class XID repeated
on one GPU as possible hardware, and a reset-class XID older than the GPU's last reset as
resolved.

"fail" drains a node; "warn" is recorded and reported and fails nothing. Python 3.8 syntax."""

from __future__ import annotations

import json
import pkgutil
import re
from collections import Counter
from typing import Any, Dict, Iterable, List, Optional, Tuple

# The catalogue, read with pkgutil (from the package, or the checks' zip bundle). XIDs past it
# (173-176) carry the driver's own mnemonic (nverror.h) and the bucket "unknown".
_DATA = pkgutil.get_data(__package__ or "envkit.checks.suite", "xid_catalogue.json")
if _DATA is None:  # never an empty catalogue: every XID would read as unknown
    raise FileNotFoundError("xid_catalogue.json is missing beside xid_rules.py")
_CATALOGUE = json.loads(_DATA)
# xid: (mnemonic, resolution bucket, description)
XIDS: Dict[int, Tuple[str, str, str]] = {
    int(xid): (row[0], row[1], row[2]) for xid, row in _CATALOGUE["xids"].items()
}
# NVLink-5 decode sheet for XIDs 144-150: (xid, subcode, IntrInfo mask < R575, mask >= R575,
# error status, bucket, action-2 mask < R575, action-2 mask >= R575, action 2, severity); '-' is
# any bit, error statuses () any status
Decode = Tuple[
    int, str, str, str, Tuple[int, ...], str, Optional[str], Optional[str], Optional[str], str
]
NVLINK5_DECODE: Tuple[Decode, ...] = tuple(
    (r[0], r[1], r[2], r[3], tuple(r[4]), r[5], r[6], r[7], r[8], r[9])
    for r in _CATALOGUE["nvlink5_decode"]
)

# Bucket -> verdict. IGNORE and RESTART_APP: the application's, or nothing to do. Everything
# that asks for a reset, a reboot, a workflow, an update or support fails, as does a bucket
# this table does not know and an XID the catalogue does not list.
BUCKET_VERDICTS: Dict[str, str] = {
    "IGNORE": "warn",
    "RESTART_APP": "warn",
    # "If an XID 154 is seen along with this error, take that action": 154 is judged itself.
    "XID_154_EVAL": "warn",
    # "If UVM/vGPU is being utilized, RESET_GPU; otherwise IGNORE": envkit's nodes run CUDA
    # on the bare GPU; a vGPU host lists the XID in verify.gpu.xid_fail.
    "CHECK_UVM": "warn",
    "CONTACT_SUPPORT": "fail",
    "RESET_GPU": "fail",
    "RESTART_BM": "fail",
    "RESTART_VM": "fail",
    "CHECK_MECHANICALS": "fail",
    "UPDATE_SWFW": "fail",
    "WORKFLOW_XID_45": "fail",  # alone; with another XID it follows that one (warn here)
    "WORKFLOW_XID_48": "fail",
    "WORKFLOW_NVLINK_ERR": "fail",
    "WORKFLOW_NVLINK5_ERR": "fail",  # without a line to decode
    "XID_154": "fail",  # without an action to read
    "unknown": "fail",
}
RESET_BUCKETS = ("RESET_GPU", "WORKFLOW_XID_48")
# Application-class XIDs whose catalogue investigation is a workflow for repeats
# (WORKFLOW_XID_13, WORKFLOW_XID_31): the same one this often on one GPU in the window is
# possibly the hardware, not the application.
REPEAT_WATCHED = (13, 31)
REPEAT_LIMIT = 3
# XID 154's line (gpu.c): "GPU recovery action changed from 0x%x (%s) to 0x%x (%s)"
RECOVERY_LINE = re.compile(r"to 0x([0-9A-Fa-f]+) \(([^)]*)\)")
RECOVERY_ACTIONS = {
    0: ("None", "warn"),
    1: ("GPU Reset Required", "fail"),
    2: ("Node Reboot Required", "fail"),
    3: ("Drain P2P", "warn"),  # DCGM's health watch warns
    4: ("Drain and Reset", "fail"),
    5: ("Recover IMEX Domain", "fail"),  # DCGM's diag fails it
}
# NVLink-5 line: "<sub component> <Fatal|Nonfatal> XC<n> i<n> Link NN (intrInfo errorStatus ..."
NVLINK5_LINE = re.compile(
    r"(\w+)\s+(\w+)\s+(\w+)\s+(\w+)\s+Link\s+(-?\d+)\s+\((0x[0-9a-fA-F]+)\s+(0x[0-9a-fA-F]+)"
)
NVLINK5_XIDS = range(144, 151)


def describe(xid: int) -> str:
    known = XIDS.get(xid)
    if not known:
        return f"XID {xid} (not in NVIDIA's catalogue)"
    return f"XID {xid} ({known[2]}; {known[1]})"


def bucket_of(xid: int) -> str:
    known = XIDS.get(xid)
    return known[1] if known else "unknown"


def verdict_of_bucket(bucket: str, xid: int) -> str:
    """The verdict as docs/gpu-health.md's table gives it."""
    if xid == 154:
        return "by the action the line names (None, Drain P2P: warn; else fail)"
    if xid in NVLINK5_XIDS:
        return "by the decode sheet (RESET_GPU: fail; IGNORE: warn)"
    if bucket == "WORKFLOW_XID_45":
        return "fail alone; warn beside another XID"
    if xid in REPEAT_WATCHED:
        return f"warn; fail at {REPEAT_LIMIT}+ on one GPU"
    return BUCKET_VERDICTS.get(bucket, "fail")


def _mask_matches(mask: Optional[str], value: int) -> bool:
    """MASK's bits ('-': any) against VALUE's lowest len(MASK) bits, the highest first."""
    if not mask:
        return False
    bits = mask.strip()
    have = format(value & ((1 << len(bits)) - 1), f"0{len(bits)}b")
    return all(want in ("-", bit) for want, bit in zip(bits, have))


def decode_nvlink5(xid: int, text: str, driver_major: Optional[int]) -> Tuple[str, str]:
    """(verdict, why) for an NVLink-5 XID line: the decode sheet's row for its IntrInfo and
    error status (masks for drivers before R575, or R575 on), its "action 2" where that
    mask matches; no row: the line's own severity word; no line: fail."""
    match = NVLINK5_LINE.search(text or "")
    if not match:
        return "fail", "no NVLink-5 line to decode"
    unit, severity, intr, status = match.group(1), match.group(2), match.group(6), match.group(7)
    intr_info, error_status = int(intr, 16), int(status, 16)
    versions = [2] if driver_major and driver_major >= 575 else [1] if driver_major else [2, 1]
    for version in versions:
        for row in NVLINK5_DECODE:
            if row[0] != xid or (row[4] and error_status not in row[4]):
                continue
            if not _mask_matches(row[2] if version == 1 else row[3], intr_info):
                continue
            bucket, label = row[5], f"{row[1]} {row[9]}"
            if row[8] and _mask_matches(row[6] if version == 1 else row[7], intr_info):
                bucket, label = row[8], f"{label}, action 2"
            return BUCKET_VERDICTS.get(bucket, "fail"), f"{label}: {bucket}"
    verdict = "warn" if severity.lower() in ("nonfatal", "non-fatal") else "fail"
    return verdict, f"{unit} {severity} (no decode row; the line's own severity)"


def recovery_action(text: Optional[str]) -> Optional[int]:
    match = RECOVERY_LINE.search(text or "")
    return int(match.group(1), 16) if match else None


def judge(
    events: List[Dict[str, Any]],
    warn: Iterable[int] = (),
    fail: Iterable[int] = (),
    driver_major: Optional[int] = None,
    live_actions: Optional[Dict[int, Optional[int]]] = None,
    driver_loaded_seq: Optional[int] = None,
) -> List[Tuple[Dict[str, Any], str, str]]:
    """(event, verdict, why) for every event. An event: gpu, xid, text (the line after the
    XID, None for NVML's events), seq (kernel log records only)."""
    warn, fail = set(warn), set(fail)
    live = live_actions or {}
    counts = Counter((int(event["gpu"]), int(event["xid"])) for event in events)
    judged = []
    for event in events:
        gpu, xid = int(event["gpu"]), int(event["xid"])
        verdict, why = _verdict(event, gpu, xid, events, counts, driver_major, live)
        resettable = bucket_of(xid) in RESET_BUCKETS or xid == 154 or "RESET_GPU" in why
        if verdict == "fail" and resettable and _reset_since(event, events, driver_loaded_seq):
            verdict, why = "warn", f"{why}; the GPU was reset since"
        if xid in fail:
            verdict, why = "fail", "the site's verify.gpu.xid_fail"
        elif xid in warn:
            verdict, why = "warn", "the site's verify.gpu.xid_warn"
        judged.append((event, verdict, why))
    return judged


def _verdict(
    event: Dict[str, Any],
    gpu: int,
    xid: int,
    events: List[Dict[str, Any]],
    counts: Dict[Tuple[int, int], int],
    driver_major: Optional[int],
    live: Dict[int, Optional[int]],
) -> Tuple[str, str]:
    bucket = bucket_of(xid)
    text = event.get("text")
    if xid == 154:
        action = recovery_action(text)
        source = "the line"
        if action is None:
            action, source = live.get(gpu), "NVML's recovery action now"
        if action is None:
            return "fail", "no recovery action in the line and NVML's could not be read"
        name, verdict = RECOVERY_ACTIONS.get(action, (f"unknown action {action}", "fail"))
        return verdict, f"recovery action {name} ({source})"
    if xid in NVLINK5_XIDS:
        if text is None:
            return "fail", f"{bucket}: NVML's event carries no line to decode"
        return decode_nvlink5(xid, text, driver_major)
    if bucket == "WORKFLOW_XID_45":
        if others := [e for e in events if int(e["gpu"]) == gpu and int(e["xid"]) != 45]:
            return "warn", f"{bucket}: beside XID {others[0]['xid']}, which decides"
        return "fail", f"{bucket}: alone (restart the fabric manager)"
    if xid in REPEAT_WATCHED and counts.get((gpu, xid), 0) >= REPEAT_LIMIT:
        return "fail", (
            f"{bucket}, but {counts[(gpu, xid)]} times on this GPU "
            f"(at least {REPEAT_LIMIT}): possibly the hardware (catalogue: WORKFLOW_XID_{xid})"
        )
    return BUCKET_VERDICTS.get(bucket, "fail"), bucket


def _reset_since(
    event: Dict[str, Any], events: List[Dict[str, Any]], driver_loaded_seq: Optional[int]
) -> bool:
    """A kernel-log XID followed by the GPU's reset: the driver loaded again, or a later XID
    154 on the same GPU saying the recovery action is back to None."""
    seq = event.get("seq")
    if seq is None:
        return False
    if driver_loaded_seq is not None and driver_loaded_seq > seq:
        return True
    return any(
        later.get("seq") is not None
        and later["seq"] > seq
        and int(later["xid"]) == 154
        and int(later["gpu"]) == int(event["gpu"])
        and recovery_action(later.get("text")) == 0
        for later in events
    )
