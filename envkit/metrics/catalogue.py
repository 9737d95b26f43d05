"""Every metric family `envkit metrics` exports, named once: its name, what it means, its labels
and where its value comes from. The exposition, the alert rules, the dashboard and the docs'
table are all made from this list, so a family renamed here is renamed everywhere.

Names follow Prometheus' conventions (`envkit_` prefix, base units, `_seconds`, `_bytes`,
`_ratio`), except where dcgm-exporter exports the same quantity: there the family takes
dcgm-exporter's name and labels (`DCGM_FI_DEV_*`, `gpu`, `UUID`, `pci_bus_id`, `Hostname`), so
a dashboard or alert written for dcgm-exporter reads envkit's series as they are; the product's
name is `model_name` (dcgm-exporter's `modelName` is camelCase, which promtool's lint refuses).
Every family is a gauge: each value is the state at the latest run or reading, never a running
total this process keeps."""

from __future__ import annotations

import json
import pkgutil
from dataclasses import dataclass

HARDWARE_DATA = "hardware_families.json"

# The labels of a GPU's series, as dcgm-exporter spells them, and the target envkit ran on.
GPU_LABELS = ("target", "Hostname", "gpu", "UUID", "pci_bus_id", "model_name")
RUN_LABELS = ("target", "Hostname")
CHECK_LABELS = ("target", "Hostname", "check", "group")
FIGURE_LABELS = ("target", "Hostname", "check", "figure", "unit", "gpu")
MEMBER_LABELS = ("project", "member", "container")
STATUSES = ("pass", "fail", "skip", "error")
# The states the engine reports a container in, and envkit's own for one not created: a closed
# set, so a state label never grows the number of series.
CONTAINER_STATES = (
    "running",
    "created",
    "restarting",
    "paused",
    "exited",
    "removing",
    "dead",
    "not created",
)


@dataclass(frozen=True)
class Family:
    name: str
    help: str
    labels: tuple[str, ...]
    source: str  # where the value comes from, for docs/cluster.md
    figure: str | None = None  # the checks' figure (without its .gpuN) this family carries
    panel: str | None = None  # the dashboard's panel: "timeseries", "table" or "stat"

    @property
    def dcgm(self) -> bool:
        """Whether the name is dcgm-exporter's (taken only where the meaning is the same)."""
        return self.name.startswith("DCGM_FI_")


def _gpu(name: str, help: str, figure: str, source: str) -> Family:
    return Family(name, help, (*GPU_LABELS,), source, figure, "timeseries")


RUN_TIMESTAMP = Family(
    "envkit_run_timestamp_seconds",
    "When the target's latest verify or health run started.",
    RUN_LABELS,
    "history: the run's started_at",
    panel="table",
)
RUN_DURATION = Family(
    "envkit_run_duration_seconds",
    "How long the target's latest run took.",
    RUN_LABELS,
    "history: the run's duration",
)
RUN_HEALTHY = Family(
    "envkit_run_healthy",
    "1 when the target's latest run had no failed or errored check.",
    RUN_LABELS,
    "history: the run's state",
    panel="stat",
)
CHECK_STATUS = Family(
    "envkit_check_status",
    "Each check of the latest run, one series per status: 1 for the status it had, else 0.",
    (*CHECK_LABELS, "status"),
    "history: the check's status",
    panel="table",
)
CHECK_DURATION = Family(
    "envkit_check_duration_seconds",
    "How long each check of the latest run took.",
    CHECK_LABELS,
    "history: the check's duration",
)
FIGURE = Family(
    "envkit_check_figure",
    "A figure a check of the latest run measured (a benchmark's TFLOP/s, /dev/shm's bytes), in "
    "the unit its label names; a GPU's figure carries its index.",
    FIGURE_LABELS,
    "history: the check's figures",
    panel="timeseries",
)
FIGURE_OF_PEAK = Family(
    "envkit_check_figure_peak_ratio",
    "A figure as a fraction of the GPU's published peak (1.0 is the datasheet's figure).",
    FIGURE_LABELS,
    "history: the figure and the peak it was measured against",
    panel="timeseries",
)
FIGURE_OF_PEERS = Family(
    "envkit_check_figure_peer_ratio",
    "A benchmark figure of one GPU as a fraction of the median of the node's other GPUs in the "
    "same run (below 1.0: slower than its peers).",
    FIGURE_LABELS,
    "history: the bench group's per-GPU figures",
    panel="timeseries",
)
GPU_INFO = Family(
    "envkit_gpu_info",
    "1 for each GPU the latest run saw, labelled with its identity.",
    (*GPU_LABELS, "vbios"),
    "history: the run's fingerprint (NVML)",
    panel="table",
)
XID_EVENTS = Family(
    "envkit_gpu_xid_events",
    "XIDs in the latest run's window (NVML's events and the kernel log since the node's previous "
    "run), by code, NVIDIA's resolution bucket and envkit's verdict.",
    (*GPU_LABELS, "xid", "bucket", "verdict"),
    "history: gpu.xid's counts",
    panel="table",
)
# The GPU hardware's own families (dcgm-exporter's names where it has one), each carrying one
# figure of a gpu group check: a table, kept as data.
HARDWARE = tuple(
    _gpu(**row)
    for row in json.loads(pkgutil.get_data(__package__ or "envkit.metrics", HARDWARE_DATA) or b"")
)
MEMBER_STATE = Family(
    "envkit_member_state",
    "Each member container's state, one series per state: 1 for the state it is in, else 0.",
    (*MEMBER_LABELS, "state"),
    "envkit status: the container's state",
    panel="table",
)
MEMBER_GPUS = Family(
    "envkit_member_gpus_assigned",
    "GPUs the member's container was given (a count).",
    MEMBER_LABELS,
    "envkit status: the container's device requests",
    panel="table",
)
MEMBER_GPU_MEMORY = Family(
    "envkit_member_gpu_memory_used_bytes",
    "GPU memory held by the processes of the member's container, per GPU.",
    (*MEMBER_LABELS, "gpu"),
    "envkit status: NVML's compute processes by container",
    panel="timeseries",
)
MEMBER_GPU_UTILIZATION = Family(
    "envkit_member_gpu_utilization_ratio",
    "How busy a GPU the member's processes use is (0 to 1; the GPU's, shared by all its users).",
    (*MEMBER_LABELS, "gpu"),
    "envkit status: NVML's utilisation of the GPU",
    panel="timeseries",
)
MEMBER_GPU_PROCESSES = Family(
    "envkit_member_gpu_processes",
    "Processes of the member's container on a GPU.",
    (*MEMBER_LABELS, "gpu"),
    "envkit status: NVML's compute processes by container",
)
MEMBER_SESSIONS = Family(
    "envkit_member_ssh_sessions",
    "Open SSH sessions in the member's container.",
    MEMBER_LABELS,
    "envkit status: the activity watch",
    panel="timeseries",
)
MEMBER_KERNELS = Family(
    "envkit_member_notebook_kernels",
    "Notebook kernels in the member's container.",
    MEMBER_LABELS,
    "envkit status: the activity watch",
)
MEMBER_IDLE = Family(
    "envkit_member_idle_seconds",
    "Seconds since anything happened in the member's container (a session, a kernel, GPU work).",
    MEMBER_LABELS,
    "envkit status: the activity watch",
    panel="timeseries",
)
IDLE_STOP = Family(
    "envkit_team_idle_stop_seconds",
    "team.idle_stop: how long a member's container may stay idle before it is stopped.",
    ("project",),
    "envkit.yaml: team.idle_stop",
)
SOURCE_UP = Family(
    "envkit_metrics_source_up",
    "1 when the source (history, members) was read; 0 when it could not be (its series are then "
    "missing, never stale values presented as fresh).",
    ("source",),
    "envkit metrics itself",
    panel="stat",
)
SOURCE_AGE = Family(
    "envkit_metrics_source_age_seconds",
    "Seconds since the source was last read (served metrics are refreshed in the background).",
    ("source",),
    "envkit metrics itself",
)

FAMILIES: tuple[Family, ...] = (
    RUN_TIMESTAMP,
    RUN_DURATION,
    RUN_HEALTHY,
    CHECK_STATUS,
    CHECK_DURATION,
    FIGURE,
    FIGURE_OF_PEAK,
    FIGURE_OF_PEERS,
    GPU_INFO,
    XID_EVENTS,
    *HARDWARE,
    MEMBER_STATE,
    MEMBER_GPUS,
    MEMBER_GPU_MEMORY,
    MEMBER_GPU_UTILIZATION,
    MEMBER_GPU_PROCESSES,
    MEMBER_SESSIONS,
    MEMBER_KERNELS,
    MEMBER_IDLE,
    IDLE_STOP,
    SOURCE_UP,
    SOURCE_AGE,
)
BY_FIGURE = {f.figure: f for f in HARDWARE if f.figure}
