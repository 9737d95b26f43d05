"""A project without torch (`torch: none`, a TensorFlow or JAX box; issue 34): the suite runs on
a Python that has no torch at all, the checks that need torch skip saying why, and the ones
that judge without it (the system's state, the GPU hardware through NVML) still run. A real
venv without torch, the real runner."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO


@pytest.fixture(scope="module")
def python_without_torch(tmp_path_factory: pytest.TempPathFactory) -> str:
    folder = tmp_path_factory.mktemp("venv") / "notorch"
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--without-pip", str(folder)], check=True)
    python = str(folder / "bin" / "python")
    probe = subprocess.run([python, "-c", "import torch"], capture_output=True, check=False)
    assert probe.returncode != 0, "the venv must not see the system's torch"
    return python


def test_torch_none_skips_torchs_checks_and_runs_the_rest(python_without_torch: str) -> None:
    config = {"only": ["system", "cuda", "tensor", "gpu.inventory"], "bench": False, "torch": False}
    done = subprocess.run(
        [python_without_torch, "-m", "envkit.checks", "run", "--config", json.dumps(config)],
        cwd=REPO, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}, capture_output=True,
        text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.stdout, done.stderr
    report = json.loads(done.stdout)
    got = {c["id"]: (c["status"], c["message"]) for c in report["checks"]}
    for check_id in ("cuda.available", "tensor.matmul_dtypes", "system.dataloader_workers"):
        status, message = got[check_id]
        assert status == "skip" and "torch: none" in message, (check_id, status, message)
    assert got["system.shm"][0] in ("pass", "fail"), got["system.shm"]  # measured, not skipped
    assert "torch: none" not in got["gpu.inventory"][1], got["gpu.inventory"]
    assert not [k for k, (s, _) in got.items() if s == "error"], got
    assert report["environment"].get("torch") is None


def test_without_torch_none_a_missing_torch_is_every_checks_error(
    python_without_torch: str,
) -> None:
    config = {"only": ["system.shm", "tensor.creation"], "bench": False}
    done = subprocess.run(
        [python_without_torch, "-m", "envkit.checks", "run", "--config", json.dumps(config)],
        cwd=REPO, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}, capture_output=True,
        text=True, timeout=300, check=False,
    )  # fmt: skip
    report = json.loads(done.stdout)
    assert {c["status"] for c in report["checks"]} == {"error"}
    assert sys.executable  # the host side is not involved
    assert Path(python_without_torch).exists()
