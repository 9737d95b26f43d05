"""Samples of the team's containers, from what `envkit status --json` reports (services/status.py):
each member container's state, the GPUs it was given, the GPU memory, utilisation and processes
of its processes per GPU, its SSH sessions, notebook kernels and idle time, and the team's idle
limit (the alert on an idle member holding GPU memory compares the two)."""

from __future__ import annotations

from typing import Any

from envkit.metrics import catalogue as c
from envkit.metrics.exposition import Sample, sample


def _assigned(gpus: Any, host_gpus: int | None) -> int | None:
    """A count from what the container was given: ids, a count, "all" (the host's, when read),
    "none"."""
    if isinstance(gpus, list):
        return len(gpus)
    if gpus == "none":
        return 0
    if gpus == "all":
        return host_gpus
    return int(gpus) if isinstance(gpus, str) and gpus.isdigit() else None


def member_samples(report: dict[str, Any], host_gpus: int | None = None) -> list[Sample]:
    project = report["project"]
    out: list[Sample] = []
    if report.get("idle_stop_s"):
        out.append(sample(c.IDLE_STOP, float(report["idle_stop_s"]), project=project))
    for entry in report["containers"]:
        who = {
            "project": project,
            "member": entry.get("member") or "",
            "container": entry["container"],
        }
        state = entry["state"] if entry["state"] in c.CONTAINER_STATES else "dead"
        out += [sample(c.MEMBER_STATE, state == e, **who, state=e) for e in c.CONTAINER_STATES]
        if entry["state"] == "not created":
            continue
        if (count := _assigned(entry.get("gpus"), host_gpus)) is not None:
            out.append(sample(c.MEMBER_GPUS, count, **who))
        for gpu in entry.get("gpu_use") or ():
            at = dict(who, gpu=gpu["gpu"])
            out.append(sample(c.MEMBER_GPU_MEMORY, gpu["memory_used_bytes"], **at))
            out.append(sample(c.MEMBER_GPU_PROCESSES, gpu["processes"], **at))
            if isinstance(gpu.get("utilization"), int | float):
                out.append(sample(c.MEMBER_GPU_UTILIZATION, gpu["utilization"] / 100, **at))
        for family, key in (
            (c.MEMBER_SESSIONS, "sessions"),
            (c.MEMBER_KERNELS, "kernels"),
            (c.MEMBER_IDLE, "idle_s"),
        ):
            if isinstance(entry.get(key), int | float):
                out.append(sample(family, entry[key], **who))
    return out
