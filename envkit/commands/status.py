"""`envkit status`: each container (each member's, in per-member mode) with its state, health,
ports, GPUs and their use, SSH sessions, notebook kernels and idle time; and the GPU processes
of this host that run in no container of the project. Table or --json."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from typing import Any

from envkit.services.status import collect


@dataclass(frozen=True, kw_only=True)
class StatusRequest:
    config: str | None = None
    json: bool = False


def _activity_text(entry: dict[str, Any]) -> str:
    if entry.get("sessions") is None:
        return "activity unknown (an image from before envkit's activity watch, or without python3)"
    text = f"{entry['sessions']} ssh, {entry['kernels']} kernel(s) ({entry['busy_kernels']} busy)"
    if entry.get("idle_s") is not None:
        text += f", idle {entry['idle_s']:.0f} s"
    return text


def print_status(report: dict[str, Any]) -> None:
    write = sys.stdout.write
    for entry in report["containers"]:
        who = f" [{entry['member']}]" if entry["member"] else ""
        if entry["state"] == "not created":
            write(f"{entry['container']}{who}: not created\n")
            continue
        state = entry["state"] + (" (idle stop)" if entry["stopped_idle"] else "")
        gpus = entry["gpus"] if isinstance(entry["gpus"], str) else ",".join(entry["gpus"]) or "-"
        write(
            f"{entry['container']}{who}: {state} ({entry['health'] or '-'}) "
            f"{', '.join(entry['ports'])}  image {entry['image']}  GPUs {gpus}\n"
        )
        if entry["state"] == "running":
            write(f"    {_activity_text(entry)}\n")
        for gpu in entry.get("gpu_use") or ():
            write(
                f"    GPU {gpu['gpu']}: {gpu['memory_used_bytes'] / 2**30:.1f} GiB by "
                f"{gpu['processes']} process(es), {gpu.get('utilization', '?')} % busy\n"
            )
    wants = any(e.get("gpus") not in (None, "none", []) for e in report["containers"])
    if report["gpus_read"] != "nvml" and wants:
        write(f"GPU use not read: {report['gpus_read']}\n")
    for volume in report.get("volumes") or ():
        if volume["departed"]:
            size = volume["size_bytes"]
            shown = f"{size / 1e6:.1f} MB" if size is not None else "size unknown"
            write(
                f"{volume['name']}: home of {volume['member']}, who is no longer in "
                f"team.members ({shown}); `envkit member remove {volume['member']} "
                "--delete-home` deletes it\n"
            )
    for other in report["other_gpu_processes"]:
        where = f"container {other['container_id']}" if other["container_id"] else "the host"
        write(
            f"GPU {other['gpu']}: pid {other['pid']} ({where}, not this project's) holds "
            f"{other['memory_used_bytes'] / 2**30:.1f} GiB: {other['command'][:60]}\n"
        )


def run(request: StatusRequest) -> int:
    report = collect(request.config)
    if request.json:
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
    else:
        print_status(report)
    return 0 if any(e["state"] != "not created" for e in report["containers"]) else 1
