"""No verdict without a reading (issue 48): every gpu.* check passes only on what it read,
through the NVML stand-in (no GPU can exist on this machine: tests/gpu_standin.py builds a small
C library that answers NVML's calls from a scenario, loaded through envkit's ordinary ctypes
path). A counter NVML answers with an error fails the check that needed it, naming it; a check
that judged nothing skips with the reason; a GPU judged by either of its temperature limits;
`--require-gpu` fails on GPUs that cannot be read; `envkit health` names a lost GPU first; a
GPU whose XIDs NVML will not report is read by the kernel log or fails; and throttling is
judged under load only, as docs/gpu-health.md's rule table says."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.checks.conftest import RunChecks, RunGpu
from tests.gpu_standin import (
    Patch,
    env_for,
    on_every_gpu,
    on_gpu,
    set_field,
    statuses,
    world_of,
)
from tests.helpers import REPO

# (check, changes to h100-sxm, what the failure must name). An array answers one read each:
# the snapshots before and after the run read counters once, the watch's samples read sensors
# once per sample, so [0, "unknown"] is a counter read before the run and lost after it.
UNREAD: list[tuple[str, list[Patch], str]] = [
    ("gpu.pcie", [on_gpu(1, set_field("pcie.replays", "unknown"))], "pcie_replays (unknown)"),
    ("gpu.pcie", [on_gpu(1, set_field("pcie.replays", [0, "unknown"]))],
     "pcie_replays (unknown)"),
    ("gpu.pcie", [on_gpu(1, set_field("pcie.max_gen", "unknown"))], "pcie_max_gen (unknown)"),
    ("gpu.pcie", [on_gpu(1, set_field("utilization.gpu", "no_permission"))],
     "utilization (no_permission)"),
    ("gpu.thermal", [on_gpu(1, set_field("power_mw", "unknown"))], "power_w (unknown)"),
    ("gpu.thermal", [on_gpu(1, set_field("power_limit_mw", "unknown"))],
     "power_limit_w (unknown)"),
    ("gpu.thermal", [on_gpu(1, set_field("gpu_max_temp", "unknown"))], "gpu_max_temp (unknown)"),
    ("gpu.thermal", [on_gpu(1, set_field("temperature", [40, "unknown", 62]))],
     "temperature (unknown)"),
    ("gpu.nvlink", [on_gpu(1, set_field("nvlink.3.crc_flit", [0, "unknown"]))],
     "link 3 crc_flit (unknown)"),
    ("gpu.nvlink", [on_gpu(1, set_field("nvlink.5.replay", [0, "gpu_is_lost"]))],
     "link 5 replay (gpu_is_lost)"),
    ("gpu.ecc", [on_gpu(1, set_field("sram_threshold_exceeded", "unknown"))],
     "sram_threshold_exceeded (unknown)"),
    ("gpu.clocks", [on_gpu(1, set_field("utilization.gpu", [100, "unknown", 100]))],
     "utilization (unknown)"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("check_id", "changes", "phrase"), UNREAD, ids=[f"{u[0]}-{i}" for i, u in enumerate(UNREAD)]
)
def test_standin_a_counter_nvml_cannot_read_fails_its_check_naming_it(
    run_gpu: RunGpu, check_id: str, changes: list[Patch], phrase: str
) -> None:
    status, message = statuses(run_gpu(world_of("h100-sxm", *changes), [check_id]))[check_id]
    assert status == "fail", message
    assert "GPU 1" in message and phrase in message, message


NOTHING_JUDGED: list[tuple[str, list[Patch], str]] = [
    ("gpu.pcie", [on_every_gpu(set_field("utilization.gpu", [0]))],
     "host link not judged on GPU 0, GPU 1: no load seen"),
    ("gpu.clocks", [on_every_gpu(set_field("utilization.gpu", [0]))],
     "throttling not judged on GPU 0, GPU 1: no load seen"),
    ("gpu.pcie", [on_every_gpu(set_field("pcie.max_gen", "not_supported")),
                  on_every_gpu(set_field("pcie.max_width", "not_supported"))], "no expected link"),
    ("gpu.ecc", [on_every_gpu(set_field("ecc.mode", 0))],
     "ECC not judged on GPU 0, GPU 1: disabled"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("check_id", "changes", "phrase"),
    NOTHING_JUDGED,
    ids=[f"{n[0]}-{i}" for i, n in enumerate(NOTHING_JUDGED)],
)
def test_standin_a_check_that_judged_nothing_skips_with_the_reason(
    run_gpu: RunGpu, check_id: str, changes: list[Patch], phrase: str
) -> None:
    status, message = statuses(run_gpu(world_of("h100-sxm", *changes), [check_id]))[check_id]
    assert status == "skip", message
    assert phrase in message, message


def test_standin_a_gpu_not_judged_is_named_beside_the_ones_that_were(run_gpu: RunGpu) -> None:
    world = world_of("h100-sxm", on_gpu(1, set_field("ecc.mode", 0)))
    status, message = statuses(run_gpu(world, ["gpu.ecc"]))["gpu.ecc"]
    assert status == "pass" and "ECC not judged on GPU 1: disabled" in message, message


@pytest.mark.parametrize(("why", "status"), [("no_permission", "fail"), ("not_supported", "pass")])
def test_standin_a_gpu_whose_xids_nvml_refuses_fails_where_no_kernel_log_covers_it(
    run_gpu: RunGpu, why: str, status: str
) -> None:
    """The test's kernel log is unreadable (kmsg_from_env without a file): GPU 1's XIDs are
    read by nothing. NVML's refusal is a finding; "not supported" is what the GPU is."""
    world = world_of("h100-sxm", on_gpu(1, set_field("xid_events", why)))
    got, message = statuses(run_gpu(world, ["gpu.xid"]))["gpu.xid"]
    assert got == status, message
    said = "NVML cannot watch the XIDs of GPU 1" if status == "fail" else "not on GPU 1"
    assert f"{said} ({why})" in message or f"{said}: {why}" in message, message


def gb10(world: dict[str, Any]) -> None:
    """A DGX Spark: one GB10, whose NVML gives a max operating temperature and no slowdown."""
    for gpu in world["gpus"]:
        gpu.update(name="NVIDIA GB10", pci_device_id=0x2E12, nvlink="not_supported")
        gpu.update(slowdown_temp="not_supported", gpu_max_temp=90)


@pytest.mark.parametrize(
    ("base", "changes", "status", "phrase"),
    [
        ("gh200", [gb10, on_gpu(0, set_field("temperature", [40, 96]))], "fail",
         "reached 96 C, above its max operating temperature 90 C"),
        ("gh200", [gb10], "pass", "max 64 C (max operating 90 C)"),
        ("h100-sxm", [on_every_gpu(set_field("gpu_max_temp", "not_supported")),
                      on_gpu(1, set_field("temperature", [40, 90]))], "fail",
         "reached 90 C, above its slowdown temperature 87 C"),
    ],
)  # fmt: skip
def test_standin_a_gpu_is_judged_by_whichever_temperature_limit_nvml_gives(
    run_gpu: RunGpu, base: str, changes: list[Patch], status: str, phrase: str
) -> None:
    got, message = statuses(run_gpu(world_of(base, *changes), ["gpu.thermal"]))["gpu.thermal"]
    assert got == status, message
    assert phrase in message, message


@pytest.mark.parametrize("required", [True, False])
def test_standin_driver_not_loaded_fails_the_inventory_when_gpus_are_required(
    run_gpu: RunGpu, required: bool
) -> None:
    world = world_of("h100-sxm")
    world["init"] = "driver_not_loaded"
    env = {"PATH": "/usr/bin:/bin"}  # no nvidia-smi to fall back on
    report = run_gpu(world, ["gpu.inventory", "gpu.ecc"], env=env, require_gpu=required)
    for check_id in ("gpu.inventory", "gpu.ecc"):
        status, message = statuses(report)[check_id]
        assert status == ("fail" if required else "skip"), (check_id, message)
        assert "driver_not_loaded" in message, message


def test_standin_no_gpu_listed_fails_the_inventory_when_gpus_are_required(
    run_gpu: RunGpu,
) -> None:
    world = world_of("h100-sxm")
    world["gpus"] = []
    status, message = statuses(run_gpu(world, ["gpu.inventory"], require_gpu=True))["gpu.inventory"]
    assert status == "fail" and "nvml lists no GPU (verify.require_gpu)" in message, message


def test_standin_persistence_unreadable_fails_where_the_site_requires_it(run_gpu: RunGpu) -> None:
    world = world_of("h100-sxm", on_gpu(1, set_field("persistence", "unknown")))
    required = {"gpu": {"persistence": "required"}}
    status, message = statuses(run_gpu(world, ["gpu.inventory"], **required))["gpu.inventory"]
    assert status == "fail" and "NVML cannot read persistence (unknown)" in message, message
    assert statuses(run_gpu(world, ["gpu.inventory"]))["gpu.inventory"][0] == "pass"


def test_standin_smi_fallback_that_cannot_list_processes_fails_gpu_processes(
    run_checks: RunChecks, tmp_path: Path
) -> None:
    """nvidia-smi alone (no NVML library reachable): a process list it could not give is not an
    empty one."""
    from tests.gpu_standin import SOURCE

    folder = tmp_path / "bin"
    folder.mkdir()
    (folder / "nvidia-smi").symlink_to(SOURCE.parent / "nvidia-smi")
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(world_of("h100-sxm", on_gpu(1, set_field("processes", "unknown")))))
    env = {
        "PATH": f"{folder}:/usr/bin:/bin", "LD_LIBRARY_PATH": str(tmp_path),
        "NVML_STANDIN_SCENARIO": str(path),
    }  # fmt: skip
    status, message = statuses(run_checks(["gpu.processes"], env=env))["gpu.processes"]
    assert status == "fail" and "process list: unknown" in message, message


def test_standin_envkit_health_names_the_lost_gpu_not_a_counter_it_took_with_it(
    standin: Path, tmp_path: Path, torch_python: str
) -> None:
    """GPU 1 answers gpu_is_lost to every call: gpu.ecc, which runs first, cannot read its ECC
    counters, but the reason Slurm drains with is the lost GPU (gpu.inventory)."""
    from tests.helpers import envkit

    world = world_of("h100-sxm", on_gpu(1, set_field("lost_after_ms", 0)))
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(world))
    env = {**env_for(standin, path), "ENVKIT_NODE_STATE": str(tmp_path / "state.json")}
    done = envkit("health", "--python", torch_python, cwd=tmp_path, env=env)
    assert done.returncode == 1, done.stdout + done.stderr
    line = done.stdout.strip().splitlines()[0]
    assert line.startswith("envkit: gpu.inventory: GPU 1 "), line
    assert "lost at" in line and "gpu_is_lost" in line and "more)" in line, line


# (changes to every GPU, status, phrase): the reasons are read once per sample, with the
# utilization; a sample is under load at 50 % busy.
THROTTLING: list[tuple[list[Patch], str, str]] = [
    # a power brake while idle (the first sample), none under load: not the run's clocks
    ([set_field("clocks_event_reasons", [0x80, 0]), set_field("utilization.gpu", [0, 100])],
     "pass", "no slowdown in"),
    ([set_field("clocks_event_reasons", [8, 8, 0]), set_field("utilization.gpu", [0, 0, 100])],
     "pass", "no slowdown in"),
    # the same brake under load fails
    ([set_field("clocks_event_reasons", [0, 0x80]), set_field("utilization.gpu", [0, 100])],
     "fail", "hw_power_brake in"),
    ([set_field("clocks_event_reasons", [0x80]), set_field("utilization.gpu", [0])],
     "skip", "no load seen"),
]  # fmt: skip


@pytest.mark.parametrize(("changes", "status", "phrase"), THROTTLING)
def test_standin_throttling_is_judged_on_samples_under_load_only(
    run_gpu: RunGpu, changes: list[Patch], status: str, phrase: str
) -> None:
    world = world_of("h100-sxm", *(on_every_gpu(c) for c in changes))
    got, message = statuses(run_gpu(world, ["gpu.clocks"]))["gpu.clocks"]
    assert got == status, message
    assert phrase in message, message


def test_the_docs_rule_table_says_what_no_reading_does_for_every_gpu_check() -> None:
    """One rule per check in one place: docs/gpu-health.md's table has a "no reading" cell for
    every gpu.* check, and states the one throttling rule (samples under load)."""
    from envkit.checks.core.registry import CHECKS
    from envkit.checks.suite import load

    load()
    text = (REPO / "docs" / "gpu-health.md").read_text()
    header = next(line for line in text.splitlines() if line.startswith("| id | when |"))
    columns = [c.strip() for c in header.strip("|").split("|")]
    column = columns.index("no reading")
    rows = {
        cells[0].strip("` "): cells
        for line in text.splitlines()
        if re.match(r"\| `gpu\.", line)
        for cells in [[c.strip() for c in line.strip("|").split("|")]]
    }
    gpu_checks = {c for c in CHECKS if c.startswith("gpu.")}
    assert gpu_checks <= set(rows), gpu_checks - set(rows)
    empty = [c for c in gpu_checks if len(rows[c]) <= column or not rows[c][column]]
    assert not empty, empty
    assert "under load" in rows["gpu.clocks"][columns.index("fails on")]
