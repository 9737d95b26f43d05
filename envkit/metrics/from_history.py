"""Samples from the history store: each target's latest run (verify or health), its checks with
their status and duration, every figure with its fraction of the published peak and, for the
bench group's per-GPU figures, its fraction of the node's other GPUs; the GPU hardware counters
the gpu.* checks read, under dcgm-exporter's names where the meaning is the same; XIDs by code,
bucket and verdict. A figure's GPU is its `.gpuN` suffix; a GPU's identity (UUID, bus id, model)
comes from the run's fingerprint."""

from __future__ import annotations

import re
import statistics
from datetime import datetime
from typing import Any

from envkit.checks.suite.xid_rules import bucket_of
from envkit.history.store import History, Run
from envkit.metrics import catalogue as c
from envkit.metrics.exposition import Sample, sample

PER_GPU = re.compile(r"^(?P<figure>.+)\.gpu(?P<gpu>\d+)$")
XID = re.compile(r"^xid_(?P<xid>\d+)_(?P<verdict>[a-z]+)$")
TARGET_LIMIT = 200  # the most targets exported: the newest runs' (a bound on series, not data)


def _epoch(started_at: str) -> float | None:
    try:
        return datetime.fromisoformat(started_at.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _identities(run: Run) -> dict[str, dict[str, Any]]:
    """Each GPU's labels by index, from the fingerprint's NVML identities."""
    found: dict[str, dict[str, Any]] = {}
    vbios = run.environment.get("vbios") or []
    for gpu in run.environment.get("nvml_gpus") or ():
        if not isinstance(gpu, dict) or not isinstance(gpu.get("index"), int):
            continue
        index = gpu["index"]
        found[str(index)] = {
            "UUID": gpu.get("uuid"),
            "pci_bus_id": gpu.get("bus_id"),
            "model_name": gpu.get("name"),
            "vbios": vbios[index] if isinstance(vbios, list) and index < len(vbios) else None,
        }
    return found


def run_samples(history: History, run: Run) -> list[Sample]:
    """One run's samples: the run, its GPUs, its checks and its figures."""
    where = {"target": run.target, "Hostname": run.host}
    out = [sample(c.RUN_HEALTHY, run.state == "passed", **where)]
    started = _epoch(run.started_at)
    if started is not None:
        out.append(sample(c.RUN_TIMESTAMP, started, **where))
    out.append(sample(c.RUN_DURATION, run.duration_s, **where))
    gpus = _identities(run)
    for index, identity in gpus.items():
        out.append(sample(c.GPU_INFO, 1, **where, gpu=index, **identity))
    groups: dict[str, str] = {}
    for check, status, duration in history.check_rows(run.id):
        group = groups[check] = check.split(".", 1)[0]
        at = dict(where, check=check, group=group)
        out += [sample(c.CHECK_STATUS, status == each, **at, status=each) for each in c.STATUSES]
        out.append(sample(c.CHECK_DURATION, duration, **at))
    return out + _figure_samples(history, run, where, gpus, groups)


def _figure_samples(
    history: History,
    run: Run,
    where: dict[str, Any],
    gpus: dict[str, dict[str, Any]],
    groups: dict[str, str],
) -> list[Sample]:
    """Hardware counters under their families, XIDs by code, bucket and verdict, and every
    other figure with its fraction of peak and (bench, per GPU) of the node's other GPUs."""

    def gpu_labels(index: str | None) -> dict[str, Any]:
        known = {k: v for k, v in gpus.get(index or "", {}).items() if k != "vbios"}
        return {**where, "gpu": index, **known}

    out: list[Sample] = []
    peaks = history.peaks(run.id)
    bench: dict[tuple[str, str, str], dict[str, float]] = {}
    for (check, name), (value, unit) in sorted(history.metrics(run.id).items()):
        per_gpu = PER_GPU.match(name)
        figure, gpu = (per_gpu["figure"], per_gpu["gpu"]) if per_gpu else (name, None)
        xid = XID.match(figure) if check == "gpu.xid" else None
        family = c.BY_FIGURE.get(figure) if check.startswith("gpu.") and gpu else None
        if xid:
            code = int(xid["xid"])
            labels = dict(gpu_labels(gpu), xid=code, bucket=bucket_of(code), verdict=xid["verdict"])
            out.append(sample(c.XID_EVENTS, value, **labels))
        elif family is not None:
            out.append(sample(family, value, **gpu_labels(gpu)))
        else:
            labels = dict(where, check=check, figure=figure, unit=unit, gpu=gpu)
            out.append(sample(c.FIGURE, value, **labels))
            peak = peaks.get((check, name))
            if peak:
                out.append(sample(c.FIGURE_OF_PEAK, value / peak, **labels))
            if gpu is not None and groups.get(check) == "bench":
                bench.setdefault((check, figure, unit), {})[gpu] = value
    for (check, figure, unit), by_gpu in bench.items():
        out += _peer_ratios(dict(where, check=check, figure=figure, unit=unit), by_gpu)
    return out


def _peer_ratios(labels: dict[str, Any], by_gpu: dict[str, float]) -> list[Sample]:
    """Each GPU's figure against the median of the node's others (two GPUs at least)."""
    out: list[Sample] = []
    if len(by_gpu) < 2:
        return out
    for gpu, value in by_gpu.items():
        others = statistics.median(v for g, v in by_gpu.items() if g != gpu)
        if others > 0:
            out.append(sample(c.FIGURE_OF_PEERS, value / others, **labels, gpu=gpu))
    return out


def history_samples(history: History) -> list[Sample]:
    runs = history.latest_per_target(TARGET_LIMIT)
    return [each for run in runs for each in run_samples(history, run)]
