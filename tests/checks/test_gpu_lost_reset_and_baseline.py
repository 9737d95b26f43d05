"""No verdict without a reading, where the reading is missing in time rather than refused
(issue 48), through the NVML stand-in (no GPU can exist here: tests/gpu_standin.py): a GPU
none lists, lost before the run or after its last sample; a counter that went back (a reset)
during the run; a MIG GPU whose links NVML reports Down; a baseline or a burn-in taken from a
run that judged nothing under load; a sample with two reasons counted as two."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.checks.conftest import RunGpu
from tests.gpu_standin import (
    Patch,
    StandinNode,
    env_for,
    links_active,
    on_every_gpu,
    on_gpu,
    set_field,
    statuses,
    world_of,
)

GPU_CHECKS = ("gpu.inventory", "gpu.ecc", "gpu.clocks", "gpu.thermal", "gpu.xid", "gpu.pcie")


def test_standin_no_gpu_listed_fails_every_gpu_check_when_gpus_are_required(
    run_gpu: RunGpu,
) -> None:
    """None listed is no reading: with GPUs required, each check that would judge them fails
    (as a missing library does), none skips as if the node had nothing to judge."""
    world = world_of("h100-sxm")
    world["gpus"] = []
    got = statuses(run_gpu(world, ["gpu"], require_gpu=True))
    wrong = {c: got[c] for c in GPU_CHECKS if got[c][0] != "fail"}
    assert not wrong, wrong
    assert "lists no GPU (verify.require_gpu)" in got["gpu.ecc"][1], got["gpu.ecc"]


def _lost_after_the_last_sample(gpu: dict[str, Any]) -> None:
    """What the snapshot after the run reads answers gpu_is_lost: the GPU fell off the bus
    after the watch's last sample."""
    gpu["pcie"]["replays"] = [0, "gpu_is_lost"]
    gpu["ecc"]["volatile"]["uncorrected"] = [0, "gpu_is_lost"]


def test_standin_a_gpu_lost_after_the_last_sample_fails_the_inventory_and_leads_health(
    run_gpu: RunGpu, standin: Path, tmp_path: Path, torch_python: str
) -> None:
    from tests.helpers import envkit

    world = world_of("h100-sxm", on_gpu(1, _lost_after_the_last_sample))
    status, message = statuses(run_gpu(world, ["gpu.inventory"]))["gpu.inventory"]
    assert status == "fail" and "GPU 1 " in message, message
    assert "lost after the run's last sample" in message, message
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(world))
    env = {**env_for(standin, path), "ENVKIT_NODE_STATE": str(tmp_path / "state.json")}
    done = envkit("health", "--python", torch_python, cwd=tmp_path, env=env)
    line = done.stdout.strip().splitlines()[0]
    assert line.startswith("envkit: gpu.inventory: GPU 1 "), line


def test_standin_a_gpu_lost_before_the_run_is_named_by_gpu_xid(run_gpu: RunGpu) -> None:
    """NVML cannot register a lost GPU for XID events: with no kernel log readable (the test's),
    its XIDs are read by nothing, which fails, naming it; not "no XID" on the others."""
    world = world_of("h100-sxm", on_gpu(1, set_field("handle", "gpu_is_lost")))
    status, message = statuses(run_gpu(world, ["gpu.xid"]))["gpu.xid"]
    assert status == "fail" and "GPU 1 (gpu_is_lost)" in message, message


def test_standin_every_gpu_refusing_xid_events_fails_where_no_kernel_log_covers_them(
    run_gpu: RunGpu,
) -> None:
    world = world_of("h100-sxm", on_every_gpu(set_field("xid_events", "no_permission")))
    status, message = statuses(run_gpu(world, ["gpu.xid"]))["gpu.xid"]
    assert status == "fail", message
    assert "GPU 0 (no_permission), GPU 1 (no_permission)" in message, message


# (check, change on GPU 1): a counter read lower after the run than before was reset (a driver
# reload, a GPU reset) and counted again from zero: it rose by at least what it reads after.
RESETS: list[tuple[str, Patch, str]] = [
    ("gpu.nvlink", set_field("nvlink.2.replay", [7, 3]), "link 2 replay +3"),
    ("gpu.pcie", set_field("pcie.replays", [400, 100]), "100 PCIe replays during the run"),
]


@pytest.mark.parametrize(("check_id", "change", "phrase"), RESETS, ids=[r[0] for r in RESETS])
def test_standin_a_counter_reset_during_the_run_counts_from_zero(
    run_gpu: RunGpu, check_id: str, change: Patch, phrase: str
) -> None:
    status, message = statuses(run_gpu(world_of("h100-sxm", on_gpu(1, change)), [check_id]))[
        check_id
    ]
    assert status == "fail" and phrase in message, message
    assert "went back from" in message and "(reset)" in message, message


def test_standin_a_mig_gpus_links_are_not_judged_nor_recorded_as_its_baseline(
    run_gpu: RunGpu,
) -> None:
    """NVML reports a MIG GPU's links Down (DCGM does not judge them): with none active and no
    counter read, gpu.nvlink skips; the run records no link count, so the next run without MIG
    still holds the H100 SXM to its 18 links."""
    mig = world_of("h100-sxm", on_every_gpu(set_field("mig", 1)), on_every_gpu(links_active(0)))
    status, message = statuses(run_gpu(mig, ["gpu.inventory", "gpu.pcie", "gpu.nvlink"]))[
        "gpu.nvlink"
    ]
    assert status == "skip" and "MIG mode: link state not judged" in message, message
    down = world_of("h100-sxm", on_every_gpu(links_active(0)))
    status, message = statuses(run_gpu(down, ["gpu.nvlink"]))["gpu.nvlink"]
    assert status == "fail" and "0 NVLinks active, expected 18" in message, message


def test_standin_a_baseline_is_not_taken_from_an_idle_link(run_gpu: RunGpu) -> None:
    """The first run saw no load (gpu.pcie skips) with the link idling at x8: the baseline
    keeps no width from it, and the next run under load at x8 fails against the GPU's x16."""
    idle = [set_field("utilization.gpu", [0]), set_field("pcie.width", 8)]
    first = world_of("h100-sxm", *(on_every_gpu(c) for c in idle))
    assert statuses(run_gpu(first, ["gpu.inventory", "gpu.pcie", "gpu.nvlink"]))["gpu.pcie"][0] == (
        "skip"
    )
    loaded = world_of("h100-sxm", on_every_gpu(set_field("pcie.width", 8)))
    status, message = statuses(run_gpu(loaded, ["gpu.pcie"]))["gpu.pcie"]
    assert status == "fail" and "below Gen5 x16 (its maximum)" in message, message


def test_standin_a_burn_in_that_loaded_nothing_does_not_return_a_drained_node(
    torch_python: str, tmp_path: Path
) -> None:
    node = StandinNode(torch_python, tmp_path, {"PATH": "/nonexistent"})
    faulty = world_of("h100-sxm", on_gpu(1, set_field("ecc.volatile.uncorrected", 3)))
    assert node.health(faulty, "--drain", "--node", "gpu-7")[0] == 1
    idle = world_of("h100-sxm", on_every_gpu(set_field("utilization.gpu", [0])))
    burned = statuses(node.run(idle, ["stress.gpu", "gpu.clocks", "gpu.thermal"], "stress_on_cpu"))
    assert burned["gpu.clocks"][0] == "skip", burned
    assert "burn_in" not in node.service(), node.service()


def test_standin_one_slowed_sample_with_two_reasons_is_one_sample(run_gpu: RunGpu) -> None:
    """gpu.throttle_samples tolerates samples: one loaded sample slowed for two reasons at
    once (hardware slowdown and thermal, 0x48) is one of them, not two."""
    changes = [
        set_field("clocks_event_reasons", [0, 0x48, 0]),
        set_field("utilization.gpu", [0, 100, 0]),
    ]
    world = world_of("h100-sxm", *(on_every_gpu(c) for c in changes))
    tolerated = {"gpu": {"throttle_samples": 1}}
    status, message = statuses(run_gpu(world, ["gpu.clocks"], **tolerated))["gpu.clocks"]
    assert status == "pass", message
    status, message = statuses(run_gpu(world, ["gpu.clocks"]))["gpu.clocks"]
    assert status == "fail" and "hw_slowdown in 1 of" in message, message


READ_AT_ONE_END: list[tuple[str, list[Patch], str, str]] = [
    # the run's temperatures unread: a snapshot before it is not the run's heat
    ("gpu.thermal", [on_every_gpu(set_field("temperature", [40, "not_supported"]))], "skip",
     "its temperature was not read during the run"),
    # no maximum generation to hold the link to: the fastest it ran at, and it trained down
    ("gpu.pcie", [on_gpu(1, set_field("pcie.max_gen", "not_supported")),
                  on_gpu(1, set_field("pcie.gen", [5, 3]))], "fail", "below Gen5 x16"),
    # persistence the site requires and NVML does not give: no reading of it
    ("gpu.inventory", [on_gpu(1, set_field("persistence", "not_supported"))], "fail",
     "NVML cannot read persistence (not_supported)"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("check_id", "changes", "status", "phrase"),
    READ_AT_ONE_END,
    ids=[f"{r[0]}-{i}" for i, r in enumerate(READ_AT_ONE_END)],
)
def test_standin_a_quantity_read_at_one_end_only_is_not_judged_as_read(
    run_gpu: RunGpu, check_id: str, changes: list[Patch], status: str, phrase: str
) -> None:
    required = {"gpu": {"persistence": "required"}}
    got, message = statuses(run_gpu(world_of("h100-sxm", *changes), [check_id], **required))[
        check_id
    ]
    assert got == status and phrase in message, message
