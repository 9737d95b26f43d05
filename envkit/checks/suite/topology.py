"""The node's own healthy topology as its baseline: each GPU's active NVLinks, PCIe generation
and width, VBIOS, and the GPU count, recorded by the first run whose topology checks passed,
kept in the node state (core/node_state.py). Later runs fail on any GPU, link or lane lost
against it; `envkit health --baseline reset` forgets it after intended hardware work. A SKU
whose link count depends on the node (a bridge, a topology) is judged by this, not by a
guess. The same end-of-run record keeps the kernel log's cursor and a clean burn-in of a node
out of service. Python 3.8 syntax."""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence

from ..core.node_state import NodeState, now

# The checks whose pass makes a topology healthy enough to be the baseline.
JUDGES = ("gpu.inventory", "gpu.nvlink", "gpu.pcie")
# What a burn-in that returns a node to service holds: the burn itself, and the checks that
# judge the GPUs under its load (throttling, temperatures and power).
BURN_IN = ("stress.gpu", "gpu.clocks", "gpu.thermal")


def gpu_key(snapshot: Dict[str, Any]) -> str:
    return str(snapshot.get("uuid") or snapshot.get("bus_id") or f"index {snapshot['index']}")


def of(snaps: List[Dict[str, Any]], samples: List[Dict[str, Any]]) -> Dict[str, Any]:
    """The topology these snapshots (and loaded samples) show."""
    gpus = {}
    for snap in snaps:
        links = snap.get("nvlinks")
        summary = samples[snap["index"]] if snap["index"] < len(samples) else {}
        widths = [int(k.split("x")[1]) for k in (summary.get("pcie_loaded") or {})]
        gens = [int(k.split("x")[0]) for k in (summary.get("pcie_loaded") or {})]
        gpus[gpu_key(snap)] = {
            "index": snap["index"],
            "name": snap.get("name"),
            "pci_device_id": snap.get("pci_device_id"),
            "vbios": snap.get("vbios"),
            # a MIG GPU's links read Down (DCGM's bug 200682374): no count to hold later runs to
            "nvlinks_active": (
                sum(1 for link in links if link.get("active"))
                if isinstance(links, list) and not snap.get("mig")
                else None
            ),
            # the link as it trains under load only: an idle link runs narrower and slower
            "pcie_gen": max(gens) if gens else None,
            "pcie_width": max(widths) if widths else None,
        }
    return {"gpu_count": len(snaps), "gpus": gpus, "recorded_at": now()}


def baseline_gpu(record: Dict[str, Any], snapshot: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    found = ((record.get("baseline") or {}).get("gpus") or {}).get(gpu_key(snapshot))
    return found if isinstance(found, dict) else None


def remember(record: Dict[str, Any], results: Sequence[Mapping[str, Any]], run: str) -> str:
    """After RUN (its start): the kernel log's cursor always (an XID is reported once), the
    topology when there is no baseline yet and every topology check passed, and, while the node
    is out of service, a clean burn-in (the next passing `envkit health --drain` returns it) or
    a failure that undoes one. "" or a note."""
    state = NodeState(str((record.get("node_state") or {}).get("path") or "") or None)
    kernel = record.get("kernel") or {}
    if kernel.get("cursor"):
        state.data["kmsg"] = kernel["cursor"]
    statuses = {r.get("id"): r.get("status") for r in results}
    judged = [statuses.get(check) for check in JUDGES]
    if (
        state.baseline is None
        and record.get("before")
        and all(s in ("pass", "skip", None) for s in judged)
        and any(s == "pass" for s in judged)
    ):
        state.data["baseline"] = of(record["before"], record.get("samples") or [])
    service = state.service
    if service.get("out") and {"fail", "error"} & set(statuses.values()):
        service.pop("burn_in", None)  # a failure since the burn-in: it proved nothing
    elif service.get("out") and all(statuses.get(check) == "pass" for check in BURN_IN):
        # each passed: a clocks or thermal check that saw no load judged nothing
        service["burn_in"] = {"run": run, "checks": len(statuses)}
    return state.save()


def forget(path: Optional[str] = None) -> str:
    """`envkit health --baseline reset`: the next healthy run records a new baseline."""
    state = NodeState(path)
    state.data.pop("baseline", None)
    return state.save()
