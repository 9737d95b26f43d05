"""Samples from the history store: each target's latest run (verify or health), its checks with
their status and duration, every figure with its fraction of the published peak and, for the
bench group's per-GPU figures, its fraction of the node's other GPUs; the GPU hardware counters
the gpu.* checks read, under dcgm-exporter's names where the meaning is the same; XIDs by code,
bucket and verdict; each gpu.* check's verdict per GPU. A figure's GPU is its `.gpuN` suffix; a
GPU's identity (UUID, bus id, model) comes from the run's fingerprint, and the Slurm jobs on it
(runs made on this machine) from collect.py."""

from __future__ import annotations

import re
import socket
import statistics
from collections.abc import Callable
from datetime import datetime
from typing import Any

from envkit.checks.suite.xid_rules import bucket_of
from envkit.history.store import History, Run
from envkit.metrics import catalogue as c
from envkit.metrics.exposition import Sample, sample

PER_GPU = re.compile(r"^(?P<figure>.+)\.gpu(?P<gpu>\d+)$")
# A gpu.* check names the GPU of each problem as its who() writes it ("GPU 3 (NVIDIA B200, ...)"),
# the words a Slurm drain reason carries too; after "also (warn)" come warnings only.
# tests/checks/test_metrics_from_runs.py holds this for every fault class of the stand-in.
NAMED_GPU, WARNED = re.compile(r"\bGPU (\d+)\b"), "also (warn)"
XID = re.compile(r"^xid_(?P<xid>\d+)_(?P<verdict>[a-z]+)$")
TARGET_LIMIT = 200  # the most targets exported: the newest runs' (a bound on series, not data)
Jobs = dict[str, list[tuple[str, str | None]]]  # a GPU's index: each Slurm job on it, its user


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


def run_samples(history: History, run: Run, jobs: Jobs | None = None) -> list[Sample]:
    """One run's samples: the run, its GPUs, its checks and its figures; each GPU's series
    once per Slurm job on it (JOBS, as dcgm-exporter repeats them), else once."""
    where = {"target": run.target, "Hostname": run.host}
    out = [sample(c.RUN_HEALTHY, run.state == "passed", **where)]
    if (started := _epoch(run.started_at)) is not None:
        out.append(sample(c.RUN_TIMESTAMP, started, **where))
    out.append(sample(c.RUN_DURATION, run.duration_s, **where))
    gpus = _identities(run)

    def on(index: str | None) -> list[dict[str, Any]]:
        known = {k: v for k, v in gpus.get(index or "", {}).items() if k != "vbios"}
        held = (jobs or {}).get(index or "") or [("", None)]  # "": no job, no label
        return [
            {**where, "gpu": index, **known, "hpc_job": j or None, "hpc_user": u} for j, u in held
        ]

    for index, identity in gpus.items():
        out += [sample(c.GPU_INFO, 1, **at, vbios=identity["vbios"]) for at in on(index)]
    groups: dict[str, str] = {}
    for check, status, duration, message in history.check_rows(run.id):
        group = groups[check] = check.split(".", 1)[0]
        at = dict(where, check=check, group=group)
        out += [sample(c.CHECK_STATUS, status == each, **at, status=each) for each in c.STATUSES]
        out.append(sample(c.CHECK_DURATION, duration, **at))
        verdicts = _gpu_verdicts(status, message, set(gpus)) if group == "gpu" else {}
        out += [
            sample(c.GPU_CHECK_STATUS, verdict == each, **labels, check=check, status=each)
            for gpu, verdict in verdicts.items()
            for labels in on(gpu)
            for each in c.GPU_STATUSES
        ]
    return out + _figure_samples(history, run, where, on, groups)


def _gpu_verdicts(status: str, message: str, gpus: set[str]) -> dict[str, str]:
    """Each GPU's status in one gpu.* check: a failing check's status for the GPUs it names,
    pass for its others; none where it skipped, or failed naming no GPU (the node's fault:
    fewer GPUs than expected, the check itself broken)."""
    if status == "pass":
        return dict.fromkeys(gpus, status)
    named = set(NAMED_GPU.findall(message.split(WARNED)[0])) if status != "skip" else set()
    return {gpu: status if gpu in named else "pass" for gpu in gpus | named} if named else {}


def _figure_samples(
    history: History,
    run: Run,
    where: dict[str, Any],
    on: Callable[[str | None], list[dict[str, Any]]],
    groups: dict[str, str],
) -> list[Sample]:
    """Hardware counters under their families, XIDs by code, bucket and verdict, and every
    other figure with its fraction of peak and (bench, per GPU) of the node's other GPUs."""
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
            what = {"xid": code, "bucket": bucket_of(code), "verdict": xid["verdict"]}
            out += [sample(c.XID_EVENTS, value, **at, **what) for at in on(gpu)]
        elif family is not None:
            out += [sample(family, value, **at) for at in on(gpu)]
        else:
            labels = dict(where, check=check, figure=figure, unit=unit, gpu=gpu)
            out.append(sample(c.FIGURE, value, **labels))
            if peak := peaks.get((check, name)):
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


def history_samples(history: History, jobs: Jobs | None = None) -> list[Sample]:
    """Every target's latest run; JOBS, the Slurm jobs on this machine's GPUs, label the GPUs
    of the runs made here."""
    here = socket.gethostname().split(".")[0]
    out: list[Sample] = []
    for run in history.latest_per_target(TARGET_LIMIT):
        made_here = (run.host or "").split(".")[0] == here
        out += run_samples(history, run, jobs if made_here else None)
    return out
