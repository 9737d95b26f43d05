"""Back into service, through the NVML stand-in and the real health program and runner (no
Slurm here: the drain itself is tests/e2e/test_slurm.py's): `health --drain` records when and
why the node went out; a passing quick check does not bring it back, nor does a run without
the burn-in, nor a burn-in that failed or judged nothing under load; a clean burn-in is
recorded with its run, and the health program reports the node healthy again."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.gpu_standin import checks_env, on_gpu, scenario, set_field, world_of
from tests.helpers import REPO

pytestmark = pytest.mark.slow

HEALTHY = scenario("h100-sxm")
FAULTY = world_of("h100-sxm", on_gpu(1, set_field("ecc.volatile.uncorrected", 3)))
# What a burn-in holds: the burn, and the checks that judge the GPUs under its load.
BURN_IN = ["stress.gpu", "gpu.clocks", "gpu.thermal"]


class Node:
    """One node's stand-in GPUs and node state, and the health program and runner on it."""

    def __init__(self, python: str, folder: Path) -> None:
        self.python, self.folder = python, folder
        self.state = folder / "node-state.json"

    def env(self, world: dict[str, Any], plants: str = "") -> dict[str, str]:
        path = self.folder / "scenario.json"
        path.write_text(json.dumps(world))
        env = checks_env(path, self.state)
        env["PATH"] = "/nonexistent"  # no Slurm command answers: this node is in no cluster
        env["ENVKIT_TEST_PLANT"] = ",".join(p for p in ("kmsg_from_env", plants) if p)
        return env

    def health(self, world: dict[str, Any], *args: str) -> tuple[int, str]:
        done = subprocess.run(
            [self.python, "-m", "envkit.checks", "health", *args],
            capture_output=True, text=True, env=self.env(world), cwd=REPO, timeout=120,
            check=False,
        )  # fmt: skip
        lines = done.stdout.splitlines()
        assert len(lines) == 1, done.stdout + done.stderr  # the one line Slurm reads
        return done.returncode, lines[0]

    def run(self, only: list[str], plants: str) -> dict[str, Any]:
        settings = json.dumps({"only": only, "bench": False, "stress_s": 2})
        done = subprocess.run(
            [self.python, "-m", "envkit.checks", "run", "--config", settings],
            capture_output=True, text=True, env=self.env(HEALTHY, plants), cwd=REPO,
            timeout=600, check=False,
        )  # fmt: skip
        assert done.stdout, done.stderr
        return dict(json.loads(done.stdout))

    def service(self) -> dict[str, Any]:
        found: dict[str, Any] = json.loads(self.state.read_text())["service"]
        return found


def test_standin_a_drained_node_stays_out_until_a_clean_burn_in_passes(
    torch_python: str, tmp_path: Path
) -> None:
    node = Node(torch_python, tmp_path)
    code, line = node.health(FAULTY, "--drain", "--node", "gpu-7")
    assert code == 1 and line.startswith("envkit: gpu.ecc: GPU 1 "), line
    out = node.service()
    assert out["out"] is True and out["reason"] == line and out["drained_at"].endswith("Z"), out

    # The GPU was reset: the quick check passes, and the node still waits for its burn-in.
    code, line = node.health(HEALTHY)
    assert code == 1, line
    assert line.startswith(f"envkit: out since {out['drained_at']} until a burn-in passes"), line
    assert "gpu.ecc: GPU 1 " in line

    burned = node.run(["stress.gpu"], "stress_on_cpu")  # nothing judged the GPUs under load
    assert {c["id"]: c["status"] for c in burned["checks"]}["stress.gpu"] == "pass"
    assert "burn_in" not in node.service()
    failed = node.run(BURN_IN, "stress_on_cpu,stress_fault")
    assert {c["id"]: c["status"] for c in failed["checks"]}["stress.gpu"] == "fail"
    assert "burn_in" not in node.service()
    assert node.health(HEALTHY)[0] == 1

    clean = node.run(BURN_IN, "stress_on_cpu")
    assert {c["status"] for c in clean["checks"]} <= {"pass", "skip"}, clean["checks"]
    assert node.service()["burn_in"]["run"] == clean["started_at"]
    code, line = node.health(HEALTHY)
    assert code == 0 and line.startswith("envkit: healthy"), line
    # Resuming the node is Slurm's, and none answers here: it stays out, and says why.
    code, line = node.health(HEALTHY, "--drain", "--node", "gpu-7")
    assert code == 1 and line.startswith("envkit: could not resume gpu-7: sinfo: "), line
    assert node.service()["out"] is True

    # A failure after the burn-in undoes it.
    assert node.health(FAULTY, "--drain", "--node", "gpu-7")[0] == 1
    assert "burn_in" not in node.service() and node.service()["drained_at"] == out["drained_at"]
