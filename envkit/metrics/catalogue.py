"""Every metric family `envkit metrics` exports, named once: its name, what it means, its labels
and where its value comes from. The exposition, the alert rules, the dashboard and the docs'
table are all made from this list (families.json beside this module), so a family renamed
there is renamed everywhere.

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
from typing import Any

DATA = "families.json"  # every family: its name, help, labels, source, figure and panel

# The labels of a GPU's series, as dcgm-exporter spells them, and the target envkit ran on; the
# Slurm job on the GPU (dcgm-exporter's hpc_job: one series per job) and that job's user.
JOB_LABELS = ("hpc_job", "hpc_user")
GPU_LABELS = ("target", "Hostname", "gpu", "UUID", "pci_bus_id", "model_name", *JOB_LABELS)
RUN_LABELS = ("target", "Hostname")
CHECK_LABELS = ("target", "Hostname", "check", "group")
FIGURE_LABELS = ("target", "Hostname", "check", "figure", "unit", "gpu")
MEMBER_LABELS = ("project", "member", "container")
STATUSES = ("pass", "fail", "skip", "error")
GPU_STATUSES = ("pass", "fail", "error")  # a check that skipped judged no GPU
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


def _family(row: dict[str, Any]) -> Family:
    """One row of families.json; a label "@GPU" stands for GPU_LABELS (and so on)."""
    labels: list[str] = []
    for label in row.pop("labels"):
        labels += LABEL_SETS[label[1:]] if label.startswith("@") else [label]
    return Family(labels=tuple(labels), **row)


LABEL_SETS = {
    "GPU": GPU_LABELS,
    "RUN": RUN_LABELS,
    "CHECK": CHECK_LABELS,
    "FIGURE": FIGURE_LABELS,
    "MEMBER": MEMBER_LABELS,
}
# The catalogue as data, in the order the exposition and the docs' table list it.
FAMILIES: tuple[Family, ...] = tuple(
    _family(row)
    for row in json.loads(pkgutil.get_data(__package__ or "envkit.metrics", DATA) or b"")
)
BY_NAME = {family.name: family for family in FAMILIES}
# The GPU hardware's own families (dcgm-exporter's names where it has one): each carries one
# figure of a gpu group check.
HARDWARE = tuple(family for family in FAMILIES if family.figure)
BY_FIGURE = {family.figure: family for family in HARDWARE}
# The families the exposition, the rules and the dashboard name in code.
RUN_TIMESTAMP = BY_NAME["envkit_run_timestamp_seconds"]
RUN_DURATION = BY_NAME["envkit_run_duration_seconds"]
RUN_HEALTHY = BY_NAME["envkit_run_healthy"]
CHECK_STATUS = BY_NAME["envkit_check_status"]
CHECK_DURATION = BY_NAME["envkit_check_duration_seconds"]
FIGURE = BY_NAME["envkit_check_figure"]
FIGURE_OF_PEAK = BY_NAME["envkit_check_figure_peak_ratio"]
FIGURE_OF_PEERS = BY_NAME["envkit_check_figure_peer_ratio"]
GPU_INFO = BY_NAME["envkit_gpu_info"]
XID_EVENTS = BY_NAME["envkit_gpu_xid_events"]
GPU_CHECK_STATUS = BY_NAME["envkit_gpu_check_status"]
MEMBER_STATE = BY_NAME["envkit_member_state"]
MEMBER_GPUS = BY_NAME["envkit_member_gpus_assigned"]
MEMBER_GPU_MEMORY = BY_NAME["envkit_member_gpu_memory_used_bytes"]
MEMBER_GPU_UTILIZATION = BY_NAME["envkit_member_gpu_utilization_ratio"]
MEMBER_GPU_PROCESSES = BY_NAME["envkit_member_gpu_processes"]
MEMBER_SESSIONS = BY_NAME["envkit_member_ssh_sessions"]
MEMBER_KERNELS = BY_NAME["envkit_member_notebook_kernels"]
MEMBER_IDLE = BY_NAME["envkit_member_idle_seconds"]
IDLE_STOP = BY_NAME["envkit_team_idle_stop_seconds"]
SOURCE_UP = BY_NAME["envkit_metrics_source_up"]
SOURCE_AGE = BY_NAME["envkit_metrics_source_age_seconds"]
