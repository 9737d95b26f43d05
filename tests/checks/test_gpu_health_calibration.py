"""GPU health calibrated to NVIDIA's XID catalogue and DCGM (issue 36), through the NVML stand-in
(no GPU can exist on this machine: tests/gpu_standin.py builds a small C library that answers
NVML's calls from a scenario, loaded through envkit's ordinary ctypes path) and a kernel log,
uptime and boot id of the test's own (the kmsg_from_env plant). Each rule: its fault fails, its
control passes, "not supported" skips, NVML's `unknown` is a finding."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.checks.conftest import RunGpu
from tests.gpu_standin import (
    Patch,
    env_for,
    links_active,
    on_every_gpu,
    on_gpu,
    set_field,
    statuses,
    world_of,
    xid_event,
)
from tests.helpers import PLANTS_DIR, REPO

GPU0, GPU1 = "PCI:0000:18:00", "PCI:0000:38:00"  # h100-sxm's two GPUs, as the kernel writes them
BOOT = "6f1d4c1e-0000-4000-8000-00000000b007"


class KernelLog:
    """A kernel log in /dev/kmsg's record format, its uptime and boot id, as the plant reads
    them: records are appended with seconds since boot."""

    def __init__(self, folder: Path, boot: str = BOOT) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.log, self.uptime, self.boot = folder / "kmsg", folder / "uptime", folder / "boot"
        self.seq = 100
        self.log.write_text("6,99,500000,-;NVRM: loading NVIDIA UNIX x86_64 Kernel Module\n")
        self.boot.write_text(boot + "\n")
        self.now(60.0)

    def now(self, seconds: float) -> None:
        self.uptime.write_text(f"{seconds:.2f} 0.00\n")

    def xid(self, at_s: float, bus: str, text: str) -> None:
        self.seq += 1
        with self.log.open("a") as out:
            out.write(f"3,{self.seq},{int(at_s * 1e6)},-;NVRM: Xid ({bus}): {text}\n")

    def env(self) -> dict[str, str]:
        return {
            "ENVKIT_TEST_KMSG": str(self.log),
            "ENVKIT_TEST_UPTIME": str(self.uptime),
            "ENVKIT_TEST_BOOT_ID": str(self.boot),
        }


def _no_nvml_events(world: dict[str, Any]) -> None:
    for gpu in world["gpus"]:
        gpu["xid_events"] = "not_supported"


def _xid_verdict(run_gpu: RunGpu, world: dict[str, Any], log: KernelLog) -> tuple[str, str]:
    report = run_gpu(world, ["gpu.xid"], "kmsg_from_env", env=log.env())
    return statuses(report)["gpu.xid"]


# ---------------------------------------------------------------- XIDs by the catalogue


@pytest.mark.parametrize(
    ("code", "status", "phrase"),
    [
        (94, "pass", "XID 94 (Contained memory error; RESTART_APP) during start-up: warn"),
        (109, "fail", "XID 109 (Context Switch Timeout Error; RESET_GPU) during start-up: fail"),
        (63, "pass", "XID 63 (GPU memory remapping event; IGNORE)"),
        (121, "pass", "C2C Error; IGNORE"),
        (8, "pass", "RESTART_APP"),
        (48, "fail", "WORKFLOW_XID_48"),
        (1234, "fail", "XID 1234 (not in NVIDIA's catalogue)"),
    ],
)
def test_standin_nvml_xid_event_is_judged_by_its_catalogue_bucket(
    run_gpu: RunGpu, code: int, status: str, phrase: str
) -> None:
    report = run_gpu(world_of("h100-sxm", on_gpu(1, xid_event(code))), ["gpu.xid"])
    got, message = statuses(report)["gpu.xid"]
    assert got == status, message
    assert phrase in message, message


def test_standin_site_lists_override_the_catalogue(run_gpu: RunGpu) -> None:
    world = world_of("h100-sxm", on_gpu(0, xid_event(94)), on_gpu(1, xid_event(109)))
    report = run_gpu(world, ["gpu.xid"], gpu={"xid_fail": [94], "xid_warn": [109]})
    status, message = statuses(report)["gpu.xid"]
    assert status == "fail" and "XID 94" in message and "verify.gpu.xid_fail" in message
    assert "XID 109" in message.split("also (warn)")[1], message


def test_standin_xid_79_before_the_previous_run_does_not_fail_envkit_health_again(
    standin: Path, torch_python: str, tmp_path: Path
) -> None:
    """The health program (what `envkit health` and Slurm run) three times on one boot: an XID
    79 fails the first run; the second, with nothing new, is healthy (the node's previous run
    already read it); a new XID 79 fails the third."""
    log = KernelLog(tmp_path)
    world = world_of("h100-sxm")
    _no_nvml_events(world)
    scenario_file = tmp_path / "scenario.json"
    scenario_file.write_text(json.dumps(world))
    env = {
        **env_for(standin, scenario_file),
        **log.env(),
        "ENVKIT_TEST_PLANT": "kmsg_from_env",
        "ENVKIT_NODE_STATE": str(tmp_path / "state.json"),
        "PYTHONPATH": f"{PLANTS_DIR}:{REPO}",
        "PATH": "/usr/bin:/bin",
    }
    config = json.dumps({"only": ["gpu.inventory", "gpu.xid"]})

    def health() -> tuple[int, str]:
        done = subprocess.run(
            [torch_python, "-m", "envkit.checks", "health", "--config", config],
            capture_output=True, text=True, env=env, cwd=REPO, timeout=120, check=False,
        )  # fmt: skip
        return done.returncode, done.stdout + done.stderr

    log.xid(30.0, GPU1, "79, GPU has fallen off the bus.")
    log.now(45.0)
    code, said = health()
    assert code == 1 and "gpu.xid" in said and "XID 79" in said, said
    log.now(345.0)  # the next health interval
    code, said = health()
    assert code == 0 and said.startswith("envkit: healthy"), said
    log.xid(400.0, GPU0, "79, GPU has fallen off the bus.")
    log.now(645.0)
    code, said = health()
    assert code == 1 and "GPU 0: XID 79" in said, said


@pytest.mark.parametrize(("at_s", "status"), [(1000.0, "pass"), (9000.0, "fail")])
def test_standin_without_a_previous_run_the_kernel_log_counts_its_last_two_hours(
    run_gpu: RunGpu, tmp_path: Path, at_s: float, status: str
) -> None:
    log = KernelLog(tmp_path)
    log.xid(at_s, GPU0, "119, pid=1, name=python, Timeout after 6s of waiting for RPC response")
    log.now(10_000.0)  # 2 h 46 min after boot: the window starts at 2 800 s
    world = world_of("h100-sxm")
    _no_nvml_events(world)
    got, message = _xid_verdict(run_gpu, world, log)
    assert got == status, message
    assert "the last 2 h" in message, message


@pytest.mark.parametrize(
    ("line", "driver", "status", "phrase"),
    [
        ("154, GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot Required)",
         "575.57.08", "fail", "recovery action Node Reboot Required (the line)"),
        ("154, GPU recovery action changed from 0x1 (GPU Reset Required) to 0x0 (None)",
         "575.57.08", "pass", "recovery action None (the line)"),
        ("154, GPU recovery action changed from 0x0 (None) to 0x3 (Drain P2P)",
         "575.57.08", "pass", "recovery action Drain P2P"),
        # NVLink-5: the decode sheet, by IntrInfo and error status, its masks by the driver:
        # NVSentinel's own fixture lines, the first from an R570 node, the second R575
        ("149, NETIR_LINK_EVT  Fatal   XC0 i0 Link 09 (0x025525c6 0x00000000 0x00000000 "
         "0x00000000 0x00000000 0x00000000)", "570.133.20", "fail", "NETIR_LINK_EVT/NETIR_LINK_DOWN"),
        ("145, RLW_SRC_TRACK Nonfatal XC1 i0 Link 10 (0x04082907 0x00000008 0x00000000 "
         "0x00000000 0x00000000 0x00000000)", "575.57.08", "pass", "RLW_SRC_TRACK Non-fatal: XID_154_EVAL"),
        ("145, RLW_NEW_UNIT Nonfatal XC1 i0 Link 10 (0x7fffffff 0x00000bad 0x0 0x0 0x0 0x0)",
         "575.57.08", "pass", "no decode row; the line's own severity"),
        ("45, pid=77, name=python, Ch 0000001f", "575.57.08", "fail", "WORKFLOW_XID_45: alone"),
    ],
)  # fmt: skip
def test_standin_kernel_lines_are_judged_by_the_catalogues_workflows(
    run_gpu: RunGpu, tmp_path: Path, line: str, driver: str, status: str, phrase: str
) -> None:
    log = KernelLog(tmp_path)
    log.xid(20.0, GPU1, line)
    world = world_of("h100-sxm", on_every_gpu(set_field("xid_events", "not_supported")))
    world["driver"] = driver
    got, message = _xid_verdict(run_gpu, world, log)
    assert got == status, message
    assert phrase in message, message


def test_standin_xid_45_beside_another_xid_follows_that_one(
    run_gpu: RunGpu, tmp_path: Path
) -> None:
    log = KernelLog(tmp_path)
    log.xid(20.0, GPU1, "13, pid=77, name=python, Graphics SM Warp Exception")
    log.xid(20.5, GPU1, "45, pid=77, name=python, Ch 0000001f")
    world = world_of("h100-sxm")
    _no_nvml_events(world)
    got, message = _xid_verdict(run_gpu, world, log)
    assert got == "pass" and "beside XID 13" in message, message


def test_standin_a_reset_class_xid_older_than_the_gpus_reset_does_not_fail(
    run_gpu: RunGpu, tmp_path: Path
) -> None:
    log = KernelLog(tmp_path)
    log.xid(20.0, GPU0, "119, pid=1, name=python, Timeout after 6s of waiting for RPC response")
    log.xid(
        20.1, GPU0, "154, GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)"
    )
    log.xid(
        50.0, GPU0, "154, GPU recovery action changed from 0x1 (GPU Reset Required) to 0x0 (None)"
    )
    world = world_of("h100-sxm")
    _no_nvml_events(world)
    got, message = _xid_verdict(run_gpu, world, log)
    assert got == "pass", message
    assert message.count("the GPU was reset since") == 2, message
    # ... and without the reset, the same XID fails (another boot: the cursor does not apply)
    control = KernelLog(tmp_path / "control", boot=BOOT.replace("b007", "b008"))
    control.xid(20.0, GPU0, "119, pid=1, name=python, Timeout after 6s")
    got, message = _xid_verdict(run_gpu, world, control)
    assert got == "fail" and "RESET_GPU" in message, message


@pytest.mark.parametrize(("times", "status"), [(2, "pass"), (3, "fail")])
def test_standin_an_application_xid_repeated_on_one_gpu_fails_as_possible_hardware(
    run_gpu: RunGpu, times: int, status: str
) -> None:
    changes = [on_gpu(0, xid_event(31, 20 + 10 * n)) for n in range(times)]
    changes.append(on_gpu(1, xid_event(31)))  # another GPU's does not add to GPU 0's count
    got, message = statuses(run_gpu(world_of("h100-sxm", *changes), ["gpu.xid"]))["gpu.xid"]
    assert got == status, message
    if status == "fail":
        assert "3 times on this GPU" in message and "WORKFLOW_XID_31" in message, message


@pytest.mark.parametrize(
    ("action", "status", "phrase"),
    [
        (0, "pass", "warn"),
        (1, "fail", "GPU Reset Required"),
        ("unknown", "fail", "could not be read"),
    ],
)
def test_standin_nvml_xid_154_without_a_line_reads_the_recovery_action(
    run_gpu: RunGpu, action: Any, status: str, phrase: str
) -> None:
    world = world_of(
        "h100-sxm", on_gpu(0, xid_event(154)), on_gpu(0, set_field("fields.230", action))
    )
    got, message = statuses(run_gpu(world, ["gpu.xid"]))["gpu.xid"]
    assert got == status, message
    assert phrase in message, message


# ---------------------------------------------------------------- the counters DCGM reads


def _set_everywhere(path: str, value: Any) -> Patch:
    return on_every_gpu(set_field(path, value))


COUNTER_CASES: list[tuple[str, str, list[Patch], str, str]] = [
    # (check, scenario, changes, status, phrase)
    ("gpu.recovery", "h100-sxm", [on_gpu(1, set_field("fields.230", 2))], "fail", "Node Reboot Required"),
    ("gpu.recovery", "h100-sxm", [on_gpu(1, set_field("fields.230", 4))], "fail", "Drain and Reset"),
    ("gpu.recovery", "h100-sxm", [on_gpu(0, set_field("fields.230", 3))], "pass", "warn: GPU 0"),
    ("gpu.recovery", "h100-sxm", [], "pass", "no GPU needs a recovery action"),
    ("gpu.recovery", "h100-sxm", [_set_everywhere("fields.230", "not_supported")], "skip", "not supported"),
    ("gpu.row_remap", "h100-sxm", [on_gpu(1, set_field("unrepairable_memory", 1))], "fail", "unrepairable"),
    ("gpu.row_remap", "h100-sxm", [on_gpu(0, set_field("remapped_rows.uncorrected", 512))], "pass",
     "warn: GPU 0 (NVIDIA H100 80GB HBM3, 00000000:18:00.0): 512 rows remapped"),
    ("gpu.row_remap", "h100-sxm", [on_gpu(0, set_field("remapped_rows.uncorrected", 511))], "pass",
     "no remapping pending"),
    ("gpu.ecc", "h100-sxm", [on_gpu(1, set_field("sram_threshold_exceeded", 1))], "pass",
     "warn: GPU 1 (NVIDIA H100 80GB HBM3, 00000000:38:00.0): the SRAM ECC error threshold"),
    ("gpu.fabric", "h100-sxm", [on_gpu(0, set_field("fabric.health_mask", 2 | 2 << 2 | 1 << 4 | 2 << 6 | 1 << 8))],
     "fail", "the fabric manager reports route unhealthy"),
    ("gpu.fabric", "h100-sxm", [on_gpu(1, set_field("fabric.health_mask", 1 | 2 << 2 | 2 << 4 | 2 << 6 | 5 << 8))],
     "fail", "bandwidth degraded"),
    ("gpu.fabric", "h100-sxm", [on_gpu(1, set_field("fabric.health_mask", 2 | 2 << 2 | 2 << 4 | 2 << 6 | 5 << 8))],
     "fail", "fabric configuration: insufficient NVLinks"),
    ("gpu.thermal", "h100-sxm", [on_gpu(0, set_field("fields.82", [40, 97]))], "fail",
     "HBM reached 97 C, above its max operating 95 C"),
    ("gpu.thermal", "h100-sxm", [on_gpu(0, set_field("fields.82", [40, 95]))], "pass", "HBM max 95 C"),
    ("gpu.nvlink", "b200-x8", [on_gpu(3, set_field("nvlink.5.fields.221", [0, 4]))], "fail",
     "link 5 symbol_errors +4"),
    ("gpu.nvlink", "b200-x8", [on_gpu(2, set_field("nvlink.1.fields.214", [0, 1]))], "fail",
     "link 1 recoveries_failed +1"),
    ("gpu.nvlink", "b200-x8", [on_gpu(2, set_field("nvlink.1.fields.213", [0, 1]))], "pass",
     "warn: GPU 2: NVLink recovered itself: link 1 recoveries_successful +1"),
    ("gpu.nvlink", "h100-sxm", [on_gpu(1, set_field("nvlink.2.replay", [0, 1]))], "fail", "link 2 replay +1"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("check_id", "base", "changes", "status", "phrase"),
    COUNTER_CASES,
    ids=[f"{c[0]}-{i}" for i, c in enumerate(COUNTER_CASES)],
)
def test_standin_counters_dcgm_reads(
    run_gpu: RunGpu, check_id: str, base: str, changes: list[Patch], status: str, phrase: str
) -> None:
    got, message = statuses(run_gpu(world_of(base, *changes), [check_id]))[check_id]
    assert got == status, message
    assert phrase in message, message


UNKNOWN: list[tuple[str, list[str]]] = [
    ("gpu.ecc", ["ecc.volatile.uncorrected", "ecc.aggregate.corrected"]),
    ("gpu.row_remap", ["unrepairable_memory"]),
    ("gpu.recovery", ["fields.230"]),
    ("gpu.nvlink", ["nvlink.3.crc_flit", "nvlink.4.replay"]),
    ("gpu.pcie", ["pcie.gen"]),
    ("gpu.thermal", ["temperature"]),
    ("gpu.clocks", ["clocks_event_reasons"]),
]


@pytest.mark.parametrize(("check_id", "fields"), UNKNOWN, ids=[u[0] for u in UNKNOWN])
def test_standin_a_counter_answering_unknown_fails_naming_it(
    run_gpu: RunGpu, check_id: str, fields: list[str]
) -> None:
    world = world_of("h100-sxm", *(on_gpu(1, set_field(f, "unknown")) for f in fields))
    got, message = statuses(run_gpu(world, [check_id]))[check_id]
    assert got == "fail", message
    assert "GPU 1" in message and "unknown" in message, message


def test_standin_every_counter_answering_unknown_fails_every_check_that_reads_one(
    run_gpu: RunGpu,
) -> None:
    def everything_unknown(gpu: dict[str, Any]) -> None:
        for name in (
            "ecc",
            "remapped_rows",
            "temperature",
            "clocks_event_reasons",
            "pcie",
            "nvlink",
            "fabric",
            "unrepairable_memory",
            "fields",
            "inforom",
        ):
            gpu[name] = "unknown"  # fmt: skip

    report = run_gpu(world_of("h100-sxm", on_gpu(0, everything_unknown)), ["gpu"])
    got = statuses(report)
    passed = {k for k, (status, _) in got.items() if status == "pass"}
    reads_none = {"gpu.cuda_env", "gpu.processes", "gpu.inventory", "gpu.xid"}
    assert passed <= reads_none, passed
    for check_id in ("gpu.ecc", "gpu.row_remap", "gpu.recovery", "gpu.pcie", "gpu.nvlink",
                     "gpu.thermal", "gpu.clocks", "gpu.fabric"):  # fmt: skip
        status, message = got[check_id]
        assert status == "fail" and "unknown" in message, (check_id, message)


# ---------------------------------------------------------------- unreadable is never healthy


def test_standin_a_gpu_lost_mid_run_fails_inventory_naming_when(run_gpu: RunGpu) -> None:
    # Lost 0.4 s after NVML was opened: after the watch's first look, while the checks run.
    world = world_of("h100-sxm", on_gpu(1, set_field("lost_after_ms", 400)))
    report = run_gpu(world, ["gpu.inventory", "tensor.creation", "autograd.seed_examples"])
    status, message = statuses(report)["gpu.inventory"]
    assert status == "fail", message
    assert "GPU 1" in message and "lost at" in message and "gpu_is_lost" in message, message


def test_standin_a_link_that_trains_down_after_the_first_loaded_sample_fails(
    run_gpu: RunGpu,
) -> None:
    # Loaded from the first sample: the watch's first look (5), its first sample (5), then 4.
    loaded = on_gpu(0, set_field("utilization.gpu", [100]))
    world = world_of("h100-sxm", loaded, on_gpu(0, set_field("pcie.gen", [5, 5, 4])))
    # a run long enough to sample the link a few times (DataLoader workers start up)
    report = run_gpu(world, ["gpu.pcie", "system.dataloader_workers"])
    status, message = statuses(report)["gpu.pcie"]
    assert status == "fail" and "Gen4 x16 in" in message, message


def test_standin_width_is_judged_only_under_load(run_gpu: RunGpu) -> None:
    """x8 while idle (links power down), x16 under load: healthy."""
    idle_narrow = on_every_gpu(set_field("pcie.width", [8, 16]))
    status, message = statuses(run_gpu(world_of("h100-sxm", idle_narrow), ["gpu.pcie"]))["gpu.pcie"]
    assert status == "pass", message


@pytest.mark.parametrize(("value", "status"), [("0", "fail"), ("1", "fail"), ("", "pass")])
def test_standin_nvidia_tf32_override_distorts_whatever_value_it_is_set_to(
    run_gpu: RunGpu, value: str, status: str
) -> None:
    """0 is the very value that forces TF32 off: set at all, it distorts the run."""
    report = run_gpu(world_of("h100-sxm"), [], env={"NVIDIA_TF32_OVERRIDE": value})
    got, message = statuses(report)["gpu.cuda_env"]
    assert got == status, message
    if status == "fail":
        assert f"NVIDIA_TF32_OVERRIDE={value}" in message, message


@pytest.mark.parametrize(
    ("name", "value", "status"),
    [("CUDA_LAUNCH_BLOCKING", "0", "pass"), ("CUDA_LAUNCH_BLOCKING", "1", "fail"),
     ("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "100", "pass"),
     ("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "50", "fail")],
)  # fmt: skip
def test_standin_distorting_variables_are_judged_by_their_meaning(
    run_gpu: RunGpu, name: str, value: str, status: str
) -> None:
    got, message = statuses(run_gpu(world_of("h100-sxm"), [], env={name: value}))["gpu.cuda_env"]
    assert got == status, message


# ---------------------------------------------------------------- SKUs and the node's baseline


def test_standin_gh200_480gb_with_its_links_and_c2c_host_link_passes(run_gpu: RunGpu) -> None:
    """Not taken for an H200 SXM (18 NVLinks, a PCIe host link): its own row, its standalone
    node's 0 NVLinks reported as a warning until a baseline exists, the host link judged as
    NVLink-C2C."""
    report = run_gpu(world_of("gh200"), ["gpu.inventory", "gpu.nvlink", "gpu.pcie"])
    got = statuses(report)
    assert got["gpu.inventory"][0] == "pass" and "= GH200 (96 GB HBM3)" in got["gpu.inventory"][1]
    assert (
        got["gpu.nvlink"][0] == "pass" and "warn: GPU 0: 0 NVLinks active" in got["gpu.nvlink"][1]
    )
    assert got["gpu.pcie"] == ("pass", "GPU 0: host link NVLink-C2C, 10 of 10 links up"), got


def test_standin_gh200_with_a_c2c_link_down_fails(run_gpu: RunGpu) -> None:
    world = world_of("gh200", on_gpu(0, set_field("nvlink.4.fields.171", 0)))
    status, message = statuses(run_gpu(world, ["gpu.pcie"]))["gpu.pcie"]
    assert status == "fail" and "NVLink-C2C host link: 9 of 10 links up" in message, message


def test_standin_an_unknown_sku_is_named_and_judged_by_the_baseline(run_gpu: RunGpu) -> None:
    renamed = on_every_gpu(set_field("name", "NVIDIA H100 Next"))
    world = world_of("h100-sxm", renamed, on_every_gpu(set_field("pci_device_id", 0x2999)))
    got = statuses(run_gpu(world, ["gpu.inventory", "gpu.nvlink"]))
    assert "device 0x2999) is not in envkit's SKU table" in got["gpu.inventory"][1], got
    assert got["gpu.nvlink"][0] == "pass" and "no baseline yet" in got["gpu.nvlink"][1], got


def test_standin_a_node_whose_baseline_had_12_nvlinks_and_now_has_0_fails(
    run_gpu: RunGpu, tmp_path: Path
) -> None:
    """H100 PCIe boards with their bridge (12 links) pass and become the node's baseline; the
    bridge gone (0 links: healthy for a board sold without one), the node fails against its
    own past. `--baseline reset` (forget) after intended work makes 0 the new baseline."""
    from envkit.checks.suite.topology import forget

    checks = ["gpu.inventory", "gpu.nvlink", "gpu.pcie"]
    first = statuses(run_gpu(world_of("h100-pcie"), checks))
    assert all(status == "pass" for status, _ in first.values()), first
    state = json.loads((tmp_path / "node-state.json").read_text())
    assert {g["nvlinks_active"] for g in state["baseline"]["gpus"].values()} == {12}
    bridge_gone = world_of("h100-pcie", on_every_gpu(links_active(0)))
    status, message = statuses(run_gpu(bridge_gone, checks))["gpu.nvlink"]
    assert status == "fail" and "0 NVLinks active, expected 12 (this node's baseline" in message
    assert forget(str(tmp_path / "node-state.json")) == ""
    status, message = statuses(run_gpu(bridge_gone, checks))["gpu.nvlink"]
    assert status == "pass" and "no baseline yet" in message, message


def test_standin_a_gpu_gone_from_the_baseline_fails_inventory(run_gpu: RunGpu) -> None:
    checks = ["gpu.inventory", "gpu.nvlink", "gpu.pcie"]
    assert statuses(run_gpu(world_of("b200-x8"), checks))["gpu.inventory"][0] == "pass"
    seven = world_of("b200-x8")
    seven["gpus"] = seven["gpus"][:7]
    status, message = statuses(run_gpu(seven, checks))["gpu.inventory"]
    assert status == "fail" and "7 GPU(s), this node's baseline" in message and "had 8" in message


def test_standin_mig_gpus_links_reported_down_are_not_judged_as_dcgm_does(
    run_gpu: RunGpu,
) -> None:
    world = world_of("h100-sxm", on_every_gpu(set_field("mig", 1)), on_every_gpu(links_active(0)))
    status, message = statuses(run_gpu(world, ["gpu.nvlink"]))["gpu.nvlink"]
    # not failed on links NVML misreports, nor passed on nothing read: no link was judged
    assert status == "skip" and "MIG mode: link state not judged" in message, message


def test_standin_all_36_nvlinks_are_read(run_gpu: RunGpu) -> None:
    def thirty_six(gpu: dict[str, Any]) -> None:
        gpu["nvlink"] = [dict(gpu["nvlink"][0]) for _ in range(36)]
        gpu["nvlink"][30]["state"] = 0
        gpu["fields"]["91"] = 36

    world = world_of("h100-sxm", on_gpu(0, thirty_six))
    status, message = statuses(run_gpu(world, ["gpu.nvlink"], gpu={"nvlinks": 36}))["gpu.nvlink"]
    assert status == "fail" and "GPU 0" in message and "35 NVLinks active, expected 36" in message


# ---------------------------------------------------------------- floors from the anchors


@pytest.mark.parametrize(
    ("plant", "status", "phrase"),
    [
        ("fake_gpu_x2_bench", "pass", "2 ordered pairs exact"),
        ("fake_gpu_x2_bench,corrupting_copy_", "fail", "peer copies arrived wrong: GPU 0 -> GPU 1"),
        # every copy at 4 GB/s against the pair's 18 NVLinks (450 GB/s each way)
        ("busbw_slow", "fail", "pairs below 40% of their link: GPU 0 -> GPU 1 at 4 GB/s"),
    ],
)
def test_fake_gpu_every_pair_is_copied_compared_and_timed_against_its_link(
    run_gpu: RunGpu, plant: str, status: str, phrase: str
) -> None:
    report = run_gpu(world_of("h100-sxm"), ["bench.p2p"], plant, bench=True)
    got, message = statuses(report)["bench.p2p"]
    assert got == status, message
    assert phrase in message, message


def test_fake_gpu_p2p_on_one_gpu_skips_saying_why(run_gpu: RunGpu) -> None:
    report = run_gpu(world_of("h100-sxm"), ["bench.p2p"], "bench_fast", bench=True)
    got, message = statuses(report)["bench.p2p"]
    assert got == "skip" and "needs 2 GPU(s), 1 visible" in message, message


@pytest.mark.parametrize(("gbs", "status"), [(2100.0, "fail"), (2900.0, "pass")])
def test_fake_gpu_memory_bandwidth_floor_is_a_fraction_of_the_published_figure(
    run_gpu: RunGpu, gbs: float, status: str
) -> None:
    """H100 SXM: the floor is 0.65 of its published 3,350 GB/s (2,178), above DCGM diag's 1,905:
    2,100 fails; 2,900 (86 %, what a healthy H100 measured) passes."""
    plant = f"memory_at_{int(gbs)}"
    report = run_gpu(world_of("h100-sxm"), ["bench.memory_bandwidth"], plant, bench=True)
    got, message = statuses(report)["bench.memory_bandwidth"]
    assert got == status, message
    if status == "fail":
        assert "memory_bandwidth.gpu0 at 62.7% of peak, below the threshold 65%" in message
    else:
        assert "best of 10" in message and "87% of peak" in message, message
