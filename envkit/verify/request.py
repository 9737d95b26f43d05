"""What `envkit verify`, `health`, `verify --slurm` and `k8s render` are asked on the command line,
as small typed requests the CLI fills. A field left None takes envkit.yaml's value, and where
the config is silent the model's default (verify/resolve.py does that, once)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_PARALLEL = 4  # targets verified at once
SUITE_TIMEOUT_S_INT = 1800  # one target's suite, when nothing says otherwise


@dataclass(frozen=True, kw_only=True)
class ChecksRequest:
    """Which checks run and what they demand."""

    only: tuple[str, ...] = ()
    skip: tuple[str, ...] = ()
    bench: bool = True
    require_gpu: bool | None = None
    expected_gpus: int | None = None
    stress_s: float | None = None  # verify --stress: burn-in seconds on every GPU


@dataclass(frozen=True, kw_only=True)
class TargetsRequest:
    """Where the suite runs; none given means every container of the project."""

    urls: tuple[str, ...] = ()
    file: Path | None = None
    local: bool = False
    image: str | None = None
    bundle: Path | None = None  # an `envkit bundle` folder: its rootfs.sqfs through ch-run
    python: str | None = None  # the interpreter with torch, where the transport takes one
    parallel: int = DEFAULT_PARALLEL
    timeout_s: float | None = None  # one target's suite

    @property
    def given(self) -> bool:
        return bool(self.urls or self.file or self.local or self.image or self.bundle)


@dataclass(frozen=True, kw_only=True)
class ReportsRequest:
    json_file: Path | None = None  # --json-file: the combined report, as a file
    junit: Path | None = None
    html: Path | None = None
    quiet: bool = False
    stdout_json: bool = False  # --json: the combined report on stdout, the table on stderr


@dataclass(frozen=True, kw_only=True)
class HistoryRequest:
    record: bool = True  # keep the run in history (envkit history)
    file: Path | None = None
    baseline: str | None = None  # auto | a run id | a report file: flag figures worse than it


@dataclass(frozen=True, kw_only=True)
class SlurmRequest:
    """`envkit verify --slurm`'s own options."""

    nodes: int | None = None
    nodelist: str | None = None
    partition: str | None = None
    gpus_per_node: int | None = None
    time: str | None = None
    runtime: str | None = None  # checked against SlurmRuntime before use
    wait_s: float | None = None  # how long envkit waits for the job, queueing included
    workdir: Path | None = None


@dataclass(frozen=True, kw_only=True)
class K8sRequest:
    """`envkit k8s render`'s options."""

    namespace: str = "default"
    image: str | None = None  # default: the built tag
    nodes: int = 1
    gpus_per_node: int | None = None  # default: from runtime.gpus
    interval_s: int = 3600  # the DaemonSet's rounds
    timeout_s: int = SUITE_TIMEOUT_S_INT  # the Job's activeDeadlineSeconds


@dataclass(frozen=True, kw_only=True)
class VerifyRequest:
    config: str | None
    targets: TargetsRequest = TargetsRequest()
    checks: ChecksRequest = ChecksRequest()
    reports: ReportsRequest = ReportsRequest()
    history: HistoryRequest = HistoryRequest()
    slurm: SlurmRequest | None = None  # verify --slurm: one batch job instead of targets
    # Labels the throwaway container of --image, so one abandoned at its deadline is found (what
    # secrets.token_hex reads, without importing hashlib's OpenSSL into every `envkit --help`).
    run_id: str = field(default_factory=lambda: os.urandom(6).hex())
