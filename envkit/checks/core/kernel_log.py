"""The kernel log's NVIDIA lines, read from /dev/kmsg with each record's sequence number and
time since boot, so XIDs count in a window that ends: from where this node's previous envkit
run stopped reading (its cursor in the node state, core/node_state.py), else the last
WINDOW_S (Azure's HPC health checks count the last 2 hours). Standard library only; Python 3.8
syntax. Tests point KMSG, UPTIME and BOOT_ID at files of their own (tests/plants)."""

from __future__ import annotations

import os
import re
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

KMSG = "/dev/kmsg"
UPTIME = "/proc/uptime"
BOOT_ID = "/proc/sys/kernel/random/boot_id"
WINDOW_S = 2 * 3600.0
# The driver's line (kernel_rc.c): "NVRM: Xid (PCI:dddd:bb:dd[ GPU-I:NN[ GPU-CI:NN]]): X, ..."
# older drivers omit "PCI:"; MIG attribution sits inside the parentheses.
XID_LINE = re.compile(
    r"NVRM: Xid \((?:PCI:)?([0-9A-Fa-f]+:[0-9A-Fa-f]+:[0-9A-Fa-f]+(?:\.[0-9A-Fa-f])?)"
    r"(?: GPU-I:\d+)?(?: GPU-CI:\d+)?\): (\d+)(?:, (.*))?"
)
# The driver loaded (every GPU starts afresh): older XIDs need no reset any more.
DRIVER_LOADED = re.compile(r"NVRM: loading NVIDIA UNIX")


class Record(NamedTuple):
    """One kernel-log record: sequence number, seconds since boot, text."""

    seq: int
    at_s: float
    text: str


def boot_id() -> str:
    try:
        with open(BOOT_ID) as handle:
            return handle.read().strip()
    except OSError:
        return ""


def uptime_s() -> Optional[float]:
    try:
        with open(UPTIME) as handle:
            return float(handle.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def read_records() -> Tuple[List[Record], str]:
    """Every record the kernel still holds, and why the log could not be read (or "")."""
    try:
        fd = os.open(KMSG, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        return [], f"kernel log not readable ({exc.strerror}: needs CAP_SYSLOG in a container)"
    chunks: List[bytes] = []
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
            chunks.append(chunk)
    finally:
        os.close(fd)
    records = []
    for line in b"".join(chunks).decode("utf-8", "replace").splitlines():
        head, sep, text = line.partition(";")
        fields = head.split(",")
        if not sep or len(fields) < 3:
            continue  # a continuation line (" KEY=value") or damage
        try:
            records.append(Record(int(fields[1]), int(fields[2]) / 1e6, text))
        except ValueError:
            continue
    return records, ""


def window(records: List[Record], cursor: Optional[Dict[str, Any]]) -> Tuple[int, str]:
    """The first sequence number that counts, and how the window was chosen (said in the
    check's message). The previous run's cursor where it is from this boot, else WINDOW_S."""
    this_boot = boot_id()
    if cursor and cursor.get("boot_id") == this_boot and isinstance(cursor.get("seq"), int):
        return int(cursor["seq"]) + 1, "since this node's previous envkit run"
    now = uptime_s()
    if now is None:
        return 0, "since boot (the uptime is unreadable)"
    first = next((r.seq for r in records if r.at_s >= now - WINDOW_S), None)
    hours = WINDOW_S / 3600
    if first is None:
        return (records[-1].seq + 1 if records else 0), f"the last {hours:g} h"
    return first, f"the last {hours:g} h (no previous run on this boot)"


def nvidia_lines(
    records: List[Record], first_seq: int
) -> Tuple[List[Dict[str, Any]], Dict[str, int]]:
    """XID lines from FIRST_SEQ on (bus, xid, text, seq, at_s), and the last driver load's
    sequence number by bus ("*": every GPU) from the whole log."""
    found: List[Dict[str, Any]] = []
    loaded: Dict[str, int] = {}
    for record in records:
        if DRIVER_LOADED.search(record.text):
            loaded["*"] = record.seq
            continue
        match = XID_LINE.search(record.text)
        if match and record.seq >= first_seq:
            found.append(
                {
                    "bus": match.group(1),
                    "xid": int(match.group(2)),
                    "text": (match.group(3) or "").strip()[:400],
                    "seq": record.seq,
                    "at_s": record.at_s,
                }
            )
    return found, loaded


def bus_key(text: str) -> Tuple[object, ...]:
    """(domain, bus, device) from NVML's 00000000:3B:00.0 and the kernel's 0000:3b:00 alike."""
    try:
        return tuple(int(p, 16) for p in re.split(r"[:.]", text.strip())[:3])
    except ValueError:
        return (text,)
