"""What the gpu.* checks share: the GPUs' snapshots (NVML, else nvidia-smi), the watch's record
of the run, and one way to judge a field on every GPU, where "not supported" is a skip (never a
pass) and any other reason NVML gives is a finding."""

from __future__ import annotations

import json
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

from ..core.context import Context
from ..core.nvml import Unavailable
from ..core.registry import CheckFailed, Skip
from ..core.smi import open_gpus

UNSUPPORTED = ("not_supported", "nvml_only", "function_not_found")
# Why a GPU's clocks or link were not judged: only a loaded GPU's are the run's (idle links
# train down and idle clocks drop); a run without benches or --stress loads nothing.
NO_LOAD = "no load seen (no sample at least 50 % busy)"


def snapshots(ctx: Context) -> Tuple[str, List[Dict[str, Any]]]:
    """(backend, a snapshot per GPU); Skip where nothing can read the GPUs' state (a failure
    when the environment requires GPUs: then the missing library is the finding)."""
    try:
        source = open_gpus()
    except Unavailable as exc:
        if ctx.require_gpu:
            raise CheckFailed(
                f"the GPUs' own state cannot be read: {exc}. Mount NVML into the container "
                "(NVIDIA_DRIVER_CAPABILITIES=compute,utility)"
            ) from None
        raise Skip(f"no NVIDIA GPU state to read here: {exc}") from None
    try:
        snaps = [source.snapshot(i) for i in range(source.count)]
    finally:
        source.close()
    if not snaps and ctx.require_gpu:  # none listed is no reading: required, a failure
        raise CheckFailed(f"{source.backend} lists no GPU (verify.require_gpu)")
    return source.backend, snaps


def observations(ctx: Context) -> Dict[str, Any]:
    """The watch's record of this run (checks/programs/watch.py), or Skip with why there is none."""
    path = ctx.gpu_watch
    if not path:
        raise Skip("judged from the whole run's record, which this run did not keep")
    with open(path) as handle:
        record: Dict[str, Any] = json.load(handle)
    if not record.get("available"):
        said = f"the GPUs could not be watched during the run: {record.get('why')}"
        if ctx.require_gpu:  # whatever the reason (no library, no driver): GPUs are required
            raise CheckFailed(f"{said} (verify.require_gpu)")
        raise Skip(said)
    if not record.get("before") and ctx.require_gpu:
        raise CheckFailed(f"{record.get('backend')} lists no GPU (verify.require_gpu)")
    return record


def who(snapshot: Dict[str, Any]) -> str:
    bus = snapshot.get("bus_id") or "?"
    return f"GPU {snapshot['index']} ({snapshot.get('name', '?')}, {bus})"


def field(snapshot: Dict[str, Any], name: str) -> Tuple[Any, Optional[str]]:
    """(value, None), or (None, NVML's reason it has none)."""
    errors = snapshot.get("errors") or {}
    why = errors.get("handle") or errors.get(name)  # a GPU NVML cannot reach answers nothing
    if why is not None or name not in snapshot:
        return None, why or "not_supported"
    return snapshot[name], None


def unreadable(reading: Dict[str, Any], names: Iterable[str]) -> List[str]:
    """Each field NVML gave no value for with a reason that is not "not supported", as "name
    (reason)": in a snapshot, or in the run's summary of a GPU (both keep `errors`)."""
    errors = reading.get("errors") or {}
    return [f"{n} ({errors[n]})" for n in names if errors.get(n) not in (None, *UNSUPPORTED)]


def cannot_read(snap: Dict[str, Any], unread: Iterable[str], during: str = "") -> List[str]:
    """The one problem naming what NVML could not read on this GPU (none when it read all)."""
    named = ", ".join(dict.fromkeys(unread))
    return [f"{who(snap)}: NVML cannot read {named}{during}"] if named else []


def _not_supported(why: str) -> str:
    if why == "nvml_only":
        return "not supported: nvidia-smi cannot read it (NVML is not loadable)"
    return "not supported" + ("" if why == "not_supported" else f" ({why})")


# A judge returns why it judged nothing on that GPU ("" or None when it judged).
Judge = Callable[[Dict[str, Any], Any, List[str], List[str]], Optional[str]]


def judge_each(
    snaps: List[Dict[str, Any]], name: str, judge: Judge, what: str, instead: str = ""
) -> str:
    """Runs `judge(snapshot, value, problems, notes)` on every GPU that has the field. A reason
    other than "not supported" is a problem; a check that judged no GPU is a skip naming each
    GPU's reason (`instead` says what covers them, when something does), never a pass."""
    problems: List[str] = []
    notes: List[str] = []
    unjudged: Dict[str, List[str]] = {}
    for snap in snaps:
        value, why = field(snap, name)
        if why is not None and why not in UNSUPPORTED:
            problems.append(f"{who(snap)}: NVML cannot read {what}: {why}")
            continue
        said = _not_supported(why) if why else judge(snap, value, problems, notes)
        if said:
            unjudged.setdefault(said, []).append(f"GPU {snap['index']}")
    if problems:
        raise CheckFailed("; ".join(problems))
    if not snaps:
        raise Skip("no GPU to judge")
    missing = [f"{what} not judged on {', '.join(g)}: {said}" for said, g in unjudged.items()]
    if sum(map(len, unjudged.values())) == len(snaps):
        raise Skip("; ".join(missing) + instead)
    return "; ".join([*notes, *missing])


def expectation(ctx: Context, key: str, default: Any = None) -> Any:
    """verify.gpu's KEY: what this site expects of its GPUs (PCIe, NVLinks, XID classes...)."""
    value = (ctx.config.get("gpu") or {}).get(key)
    return default if value is None else value


def busiest_link_rate(snap: Dict[str, Any], pcie_only: bool = False) -> Optional[float]:
    """GB/s one direction: the GPU's active NVLinks (unless pcie_only), else its PCIe link as
    trained (width) at its maximum generation (idle links drop their generation, not width)."""
    from .gpu_rules import NVLINK_LINK_GBS, PCIE_LANE_GBS

    links = [link for link in (snap.get("nvlinks") or []) if link.get("active")]
    if links and not pcie_only:
        return sum(NVLINK_LINK_GBS.get(int(link.get("version") or 4), 25.0) for link in links)
    generation, width = snap.get("pcie_max_gen"), snap.get("pcie_width")
    return PCIE_LANE_GBS[generation] * width if generation in PCIE_LANE_GBS and width else None


def link_rates(torch: Any, count: int, pcie_only: bool) -> Dict[int, Optional[float]]:
    """Each torch device's link rate from its NVML snapshot (None where unknown). Devices are
    matched by UUID, else PCI bus, else position: CUDA may order GPUs unlike NVML."""
    try:
        source = open_gpus()
    except Unavailable:
        return {index: None for index in range(count)}
    try:
        snaps = [source.snapshot(i) for i in range(source.count)]
    finally:
        source.close()
    return {
        index: busiest_link_rate(snap, pcie_only) if snap else None
        for index, snap in ((i, _matching(torch, i, snaps)) for i in range(count))
    }


def _matching(torch: Any, index: int, snaps: List[Dict[str, Any]]) -> Optional[Dict[str, Any]]:
    try:
        props = torch.cuda.get_device_properties(index)
    except Exception:  # a fake device (tests), or a torch without the properties
        props = None
    uuid = str(getattr(props, "uuid", "") or "").lower()
    bus = getattr(props, "pci_bus_id", None)
    for snap in snaps:
        if uuid and str(snap.get("uuid", "")).lower().replace("gpu-", "") == uuid:
            return snap
        if bus is not None and str(snap.get("bus_id", "")).endswith(f"{int(bus):02X}:00.0"):
            return snap
    return snaps[index] if index < len(snaps) else None
