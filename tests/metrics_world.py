"""What the metrics tests share: an 8-GPU stand-in scenario with a faulty GPU, runs recorded
into a real history store, and promtool, the Prometheus project's own checker."""

from __future__ import annotations

import json
import shutil
import subprocess
import uuid
from pathlib import Path
from typing import Any

from envkit.history.store import History
from tests.gpu_standin import on_gpu, set_field, world_of, xid_event

FAULTY_GPU = 3


def faulty_b200() -> dict[str, Any]:
    """The B200 x8 scenario with GPU 3 broken the way a drained node's GPU is: uncorrectable
    ECC errors (volatile and over its life) and XID 79 (fallen off the bus) during the run."""
    return world_of(
        "b200-x8",
        on_gpu(FAULTY_GPU, set_field("ecc.volatile.uncorrected", 2)),
        on_gpu(FAULTY_GPU, set_field("ecc.aggregate.uncorrected", 2)),
        on_gpu(FAULTY_GPU, xid_event(79, after_ms=0)),
    )


def record(history_file: Path, report: dict[str, Any], target: str) -> None:
    history = History(history_file)
    try:
        history.record(dict(report, target=target), uuid.uuid4().hex)
    finally:
        history.close()


def promtool(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    found = shutil.which("promtool")
    assert found, "promtool is missing: `make system-deps` installs Debian's prometheus"
    return subprocess.run(
        [found, *args], input=stdin, capture_output=True, text=True, timeout=120, check=False
    )


def series(text: str, name: str) -> list[str]:
    """The exposition's sample lines of one family."""
    return [line for line in text.splitlines() if line.startswith(name + "{")]


def dump(value: Any) -> str:
    return json.dumps(value, indent=1)


def run_suite_on(world: dict[str, Any], only: list[str], folder: Path) -> dict[str, Any]:
    """The real checks runner (Debian's python3 and torch) on the NVML stand-in with WORLD."""
    from tests.gpu_standin import checks_env
    from tests.helpers import REPO

    path = folder / f"scenario-{uuid.uuid4().hex[:6]}.json"
    path.write_text(json.dumps(world))
    env = checks_env(path, folder / f"node-state-{path.stem}.json")
    settings = json.dumps({"only": [*only, "gpu.cuda_env"], "bench": False})
    done = subprocess.run(
        ["/usr/bin/python3", "-m", "envkit.checks", "run", "--config", settings],
        capture_output=True, text=True, env=env, cwd=REPO, timeout=600, check=False,
    )  # fmt: skip
    assert done.stdout, done.stderr
    return dict(json.loads(done.stdout))
