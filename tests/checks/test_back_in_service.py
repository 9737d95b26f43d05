"""Back into service, through the NVML stand-in and the real health program and runner (no
Slurm here: the drain itself is tests/e2e/test_slurm.py's): `health --drain` records when and
why the node went out; a passing quick check does not bring it back, nor a burn-in that judged
nothing under load or failed; a clean burn-in is recorded with its run, the health program
reports the node healthy again, and a later failure undoes the burn-in."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.gpu_standin import StandinNode, on_gpu, scenario, set_field, world_of

pytestmark = pytest.mark.slow

HEALTHY = scenario("h100-sxm")
FAULTY = world_of("h100-sxm", on_gpu(1, set_field("ecc.volatile.uncorrected", 3)))
BURN_IN = ["stress.gpu", "gpu.clocks", "gpu.thermal"]  # the burn, and what judges its load


def test_standin_a_drained_node_stays_out_until_a_clean_burn_in_passes(
    torch_python: str, tmp_path: Path
) -> None:
    # No Slurm command answers: this node is in no cluster.
    node = StandinNode(torch_python, tmp_path, {"PATH": "/nonexistent"})
    code, line = node.health(FAULTY, "--drain", "--node", "gpu-7")
    assert code == 1 and line.startswith("envkit: gpu.ecc: GPU 1 "), line
    out = node.service()
    assert out["out"] is True and out["reason"] == line and out["drained_at"].endswith("Z"), out

    # The GPU was reset: the quick check passes, and the node still waits for its burn-in.
    code, line = node.health(HEALTHY)
    assert code == 1, line
    assert line.startswith(f"envkit: out since {out['drained_at']} until a burn-in passes"), line
    assert "gpu.ecc: GPU 1 " in line

    burned = node.run(
        HEALTHY, ["stress.gpu"], "stress_on_cpu"
    )  # nothing judged the GPUs under load
    assert {c["id"]: c["status"] for c in burned["checks"]}["stress.gpu"] == "pass"
    assert "burn_in" not in node.service()
    failed = node.run(HEALTHY, BURN_IN, "stress_on_cpu,stress_fault")
    assert {c["id"]: c["status"] for c in failed["checks"]}["stress.gpu"] == "fail"
    assert "burn_in" not in node.service()
    assert node.health(HEALTHY)[0] == 1

    clean = node.run(HEALTHY, BURN_IN, "stress_on_cpu")
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
