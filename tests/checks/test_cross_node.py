"""multigpu.cross_node under the real torchrun (Debian's torch, gloo, two processes on this
machine, one node): exact without a plant; a wrong all-reduce planted in every rank fails it.
The multi-node run through Slurm is tests/e2e/test_slurm.py."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from envkit.verify.bundle import build_bundle
from tests.helpers import PLANTS_DIR, REPO, free_port


def _torchrun(python: str, tmp_path: Path, plant: str) -> dict[str, object]:
    bundle = tmp_path / "checks.zip"
    bundle.write_bytes(build_bundle())
    env = dict(os.environ, SLURMD_NODENAME="here", PYTHONPATH=f"{PLANTS_DIR}{os.pathsep}{REPO}")
    env["ENVKIT_TEST_PLANT"] = plant
    done = subprocess.run(
        [python, "-m", "torch.distributed.run", "--nnodes", "1", "--nproc_per_node", "2",
         "--master_addr", "127.0.0.1", "--master_port", str(free_port()),
         "--redirects", "1", "--tee", "2",
         str(bundle), "collective", "--out-dir", str(tmp_path)],
        env=env, capture_output=True, text=True, timeout=240, check=False,
    )  # fmt: skip
    result = tmp_path / "here.collective.json"
    assert result.exists(), done.stdout + done.stderr
    return dict(json.loads(result.read_text()))


@pytest.mark.parametrize(("plant", "status", "phrase"), [
    ("", "pass", "all-reduce exact and DDP weights equal across 2 processes"),
    ("allreduce_wrong", "fail", "gave a wrong sum"),
])  # fmt: skip
def test_cross_node_all_reduce(
    torch_python: str, tmp_path: Path, plant: str, status: str, phrase: str
) -> None:
    result = _torchrun(torch_python, tmp_path, plant)
    assert result["id"] == "multigpu.cross_node"
    assert result["status"] == status, result
    assert phrase in str(result["message"])
