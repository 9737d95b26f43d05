"""The gpu.* checks, the per-GPU benches and the burn-in, through the NVML stand-in: no GPU can
exist on this machine, so a small C library built here answers NVML's calls from a scenario
file and envkit loads it through its ordinary ctypes path (tests/gpu_standin.py). Every fault
class fails the check that owns it; the healthy H100 SXM, H100 PCIe (12 of 18 NVLinks active)
and consumer-card scenarios pass; "not supported" is a skip, never a pass. Benches and the
burn-in run their per-GPU code on CPU devices (fake_gpu plants)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.checks.conftest import RunChecks, RunGpu
from tests.gpu_standin import (
    Patch,
    env_for,
    links_active,
    on_every_gpu,
    on_gpu,
    scenario,
    set_field,
    statuses,
    world_of,
    xid_event,
)


def v100(world: dict[str, Any]) -> None:
    """Pre-Ampere: pages are retired, rows are not remapped."""
    for gpu in world["gpus"]:
        gpu.update(name="Tesla V100-SXM2-32GB", architecture=5, fabric="not_supported")
        gpu["remapped_rows"] = "not_supported"
        gpu["retired_pages"] = {"sbe": 0, "dbe": 0, "pending": 0}
        gpu["nvlink"] = gpu["nvlink"][:6]


# SKU -> the gpu.* checks that skip on it (everything else must pass).
HEALTHY_SKIPS = {
    "h100-sxm": {"gpu.retired_pages"},
    "h100-pcie": {"gpu.retired_pages", "gpu.fabric"},
    "consumer-rtx4090": {
        "gpu.ecc", "gpu.row_remap", "gpu.retired_pages", "gpu.inforom", "gpu.fabric", "gpu.nvlink",
        "gpu.recovery",
    },
    # Grace Hopper on a standalone node: no NVSwitch fabric, no PCIe link (its host link is
    # NVLink-C2C, judged by gpu.pcie through its C2C links), no retired pages
    "gh200": {"gpu.retired_pages", "gpu.fabric"},
    "b200-x8": {"gpu.retired_pages"},
}  # fmt: skip


@pytest.mark.parametrize("sku", sorted(HEALTHY_SKIPS))
def test_standin_healthy_sku_passes_and_skips_only_what_it_lacks(sku: str, run_gpu: RunGpu) -> None:
    report = run_gpu(scenario(sku), ["gpu"])
    got = statuses(report)
    assert len(got) == 14, sorted(got)
    wrong = {k: v for k, v in got.items() if v[0] not in ("pass", "skip")}
    assert not wrong, wrong
    skipped = {k for k, (status, _) in got.items() if status == "skip"}
    assert skipped == HEALTHY_SKIPS[sku], {k: got[k] for k in skipped ^ HEALTHY_SKIPS[sku]}
    assert all(got[k][1] for k in skipped), "every skip says why"


# (check, scenario, changes, config, phrase that the failure must carry)
FAULTS: list[tuple[str, str, list[Patch], dict[str, Any], str]] = [
    ("gpu.ecc", "h100-sxm", [on_gpu(1, set_field("ecc.volatile.uncorrected", 3))], {},
     "GPU 1 (NVIDIA H100 80GB HBM3, 00000000:38:00.0): 3 uncorrectable ECC"),
    ("gpu.row_remap", "h100-sxm", [on_gpu(0, set_field("remapped_rows.pending", 1))], {},
     "row remapping pending"),
    ("gpu.row_remap", "h100-pcie", [on_gpu(1, set_field("remapped_rows.failure", 1))], {},
     "row remapping failed"),
    ("gpu.retired_pages", "h100-sxm", [v100, on_gpu(0, set_field("retired_pages.pending", 1))], {},
     "retirement is pending"),
    ("gpu.retired_pages", "h100-sxm",
     [v100, on_gpu(1, set_field("retired_pages.sbe", 40)), on_gpu(1, set_field("retired_pages.dbe", 25))],
     {}, "65 pages retired"),
    ("gpu.inforom", "h100-sxm", [on_gpu(0, set_field("inforom", "corrupted_inforom"))], {}, "InfoROM corrupted"),
    ("gpu.fabric", "h100-sxm", [on_gpu(1, set_field("fabric.state", 1))], {}, "registration not started"),
    ("gpu.fabric", "h100-sxm", [on_gpu(0, set_field("fabric.status", 5))], {}, "completed with error 5"),
    ("gpu.inventory", "h100-sxm", [on_gpu(1, set_field("handle", "gpu_is_lost"))], {}, "gpu_is_lost"),
    ("gpu.inventory", "consumer-rtx4090", [], {"gpu": {"persistence": "required"}},
     "persistence mode is off"),
    ("gpu.xid", "h100-sxm", [on_gpu(1, xid_event(79))], {}, "GPU 1: XID 79 (GPU has fallen off the bus; RESTART_BM)"),
    ("gpu.xid", "h100-sxm", [on_gpu(0, xid_event(48)), on_gpu(0, xid_event(13, 60))], {}, "XID 48 (Double Bit ECC Error; WORKFLOW_XID_48)"),
    ("gpu.xid", "h100-sxm", [on_gpu(0, xid_event(1234))], {}, "not in NVIDIA's catalogue"),
    ("gpu.xid", "h100-sxm", [on_gpu(0, xid_event(13))], {"gpu": {"xid_fail": [13]}}, "XID 13"),
    ("gpu.clocks", "h100-sxm", [on_gpu(1, set_field("clocks_event_reasons", [0, 4, 8]))], {}, "GPU 1 slowed itself: hw_slowdown"),
    ("gpu.clocks", "h100-pcie", [on_gpu(0, set_field("clocks_event_reasons", [0x40]))], {}, "hw_thermal"),
    ("gpu.clocks", "consumer-rtx4090", [on_gpu(0, set_field("clocks_event_reasons", [0x20]))], {}, "sw_thermal"),
    ("gpu.clocks", "h100-sxm", [on_gpu(0, set_field("clocks_event_reasons", [0, 0x84]))], {}, "hw_power_brake"),
    ("gpu.pcie", "h100-sxm", [on_gpu(1, set_field("pcie.width", 8))], {}, "below Gen5 x16 (its maximum) under load: Gen5 x8 in"),
    ("gpu.pcie", "h100-sxm", [on_gpu(0, set_field("pcie.gen", [5, 3]))], {}, "Gen3 x16 in"),
    ("gpu.pcie", "h100-sxm", [on_gpu(0, set_field("pcie.replays", [0, 500]))], {}, "500 PCIe replays"),
    ("gpu.pcie", "consumer-rtx4090", [], {"gpu": {"pcie_gen": 5}}, "below Gen5 x16 (verify.gpu) under load: Gen4 x16"),
    ("gpu.nvlink", "h100-sxm", [on_gpu(1, links_active(16))], {}, "16 NVLinks active, expected 18"),
    ("gpu.nvlink", "h100-pcie", [on_gpu(0, links_active(8))], {}, "8 NVLinks active, a healthy H100 PCIe has 12 or 0"),
    ("gpu.nvlink", "h100-sxm", [on_gpu(0, set_field("nvlink.3.crc_flit", [0, 10**6]))], {},
     "NVLink CRC errors at"),
    ("gpu.nvlink", "h100-sxm", [on_gpu(1, set_field("nvlink.0.recovery", [2, 3]))], {}, "link 0 recovery +1"),
    ("gpu.nvlink", "h100-sxm", [], {"gpu": {"nvlinks": 12}}, "18 NVLinks active, expected 12"),
    ("gpu.thermal", "h100-sxm", [on_gpu(0, set_field("temperature", [40, 88]))], {}, "reached 88 C, above its max operating temperature 85 C"),
    ("gpu.thermal", "h100-pcie", [on_gpu(1, set_field("power_mw", [60000, 450000]))], {}, "drew 450 W against a 350 W limit"),
    ("gpu.processes", "h100-sxm", [on_gpu(1, set_field("processes", [{"pid": 4242, "used_bytes": 3 << 30}]))], {},
     "held before the run by pid 4242 (3072 MiB)"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("check_id", "base", "changes", "config", "phrase"),
    FAULTS,
    ids=[f"{f[0]}-{i}" for i, f in enumerate(FAULTS)],
)
def test_standin_fault_fails_its_check(
    check_id: str, base: str, changes: list[Patch], config: dict[str, Any], phrase: str,
    run_gpu: RunGpu,
) -> None:  # fmt: skip
    report = run_gpu(world_of(base, *changes), [check_id], **config)
    status, message = statuses(report)[check_id]
    assert status == "fail", (status, message)
    assert phrase in message, message


# What the site or the rules accept: the same sort of signal, and a pass.
ACCEPTED: list[tuple[str, str, list[Patch], dict[str, Any], str]] = [
    ("gpu.xid", "h100-sxm", [on_gpu(0, xid_event(13)), on_gpu(1, xid_event(31))], {}, "warn: XIDs that fail nothing"),
    ("gpu.xid", "h100-sxm", [on_gpu(0, xid_event(79))], {"gpu": {"xid_warn": [79]}}, "XID 79"),
    ("gpu.clocks", "h100-sxm", [on_every_gpu(set_field("clocks_event_reasons", [0, 4]))], {}, "power cap under load (normal)"),
    ("gpu.pcie", "h100-sxm", [on_every_gpu(set_field("pcie.width", 8))], {"gpu": {"pcie_width": 8}}, "every link"),
    ("gpu.pcie", "h100-sxm", [on_every_gpu(set_field("pcie.gen", [1]))], {"gpu": {"pcie_gen": 1}}, "every link"),
    ("gpu.nvlink", "h100-pcie", [on_every_gpu(links_active(0))], {}, "warn: GPU 0: 0 NVLinks active"),
    ("gpu.nvlink", "h100-sxm", [on_gpu(0, set_field("nvlink.3.crc_flit", [0, 12]))], {}, "under 100/s: link 3 crc_flit +12"),
    ("gpu.nvlink", "h100-sxm", [on_gpu(0, set_field("nvlink.3.replay", [0, 2]))], {"gpu": {"nvlink_errors": 5}}, "every NVLink"),
    ("gpu.thermal", "h100-sxm", [on_every_gpu(set_field("power_mw", [90000, 700000]))], {}, "max 64 C"),
    ("gpu.processes", "h100-sxm", [on_gpu(1, set_field("processes", [{"pid": 7, "used_bytes": 1 << 30}]))],
     {"gpu": {"allow_processes": True}}, "held before the run by pid 7"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("check_id", "base", "changes", "config", "phrase"),
    ACCEPTED,
    ids=[f"{a[0]}-{i}" for i, a in enumerate(ACCEPTED)],
)
def test_standin_normal_signals_pass(
    check_id: str, base: str, changes: list[Patch], config: dict[str, Any], phrase: str,
    run_gpu: RunGpu,
) -> None:  # fmt: skip
    status, message = statuses(run_gpu(world_of(base, *changes), [check_id], **config))[check_id]
    assert status == "pass", (status, message)
    assert phrase in message, message


NOT_SUPPORTED: list[tuple[str, list[Patch], str]] = [
    ("gpu.ecc", [on_every_gpu(set_field("ecc", "not_supported"))], "ECC not judged on GPU 0, GPU 1: not supported"),
    ("gpu.row_remap", [on_every_gpu(set_field("remapped_rows", "not_supported"))], "row remapping"),
    ("gpu.nvlink", [on_every_gpu(set_field("nvlink", "not_supported"))], "NVLink not judged on GPU 0, GPU 1: not supported"),
    ("gpu.fabric", [on_every_gpu(set_field("fabric.state", 0))], "NVSwitch fabric"),
    ("gpu.inforom", [on_every_gpu(set_field("inforom", "not_supported"))], "InfoROM"),
    # neither limit: one of them is enough (test_gpu_no_reading.py)
    ("gpu.thermal", [on_every_gpu(set_field("slowdown_temp", "not_supported")),
                     on_every_gpu(set_field("gpu_max_temp", "not_supported"))],
     "neither its max operating nor its slowdown temperature"),
    ("gpu.processes", [on_every_gpu(set_field("processes", "not_supported"))], "process list"),
    # MIG: the parent GPU answers no clock-event reasons or utilization for its instances
    ("gpu.clocks", [on_every_gpu(set_field("mig", 1)), on_every_gpu(set_field("clocks_event_reasons", "not_supported")),
                    on_every_gpu(set_field("utilization", "not_supported"))], "not readable"),
    # no load seen (benches off): clocks under load were not observed
    ("gpu.clocks", [on_every_gpu(set_field("utilization.gpu", [0]))], "no load seen"),
    ("gpu.xid", [on_every_gpu(set_field("xid_events", "not_supported"))], "no source of XIDs"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("check_id", "changes", "phrase"), NOT_SUPPORTED, ids=[n[0] for n in NOT_SUPPORTED]
)
def test_standin_not_supported_is_a_skip_with_the_reason(
    check_id: str, changes: list[Patch], phrase: str, run_gpu: RunGpu
) -> None:
    status, message = statuses(run_gpu(world_of("h100-sxm", *changes), [check_id]))[check_id]
    assert status == "skip", (status, message)
    assert phrase in message, message


def test_standin_xid_in_the_kernel_log_fails_without_nvml_events(
    run_gpu: RunGpu, tmp_path: Path
) -> None:
    log, uptime = tmp_path / "kmsg", tmp_path / "uptime"
    log.write_text(
        "6,100,1000,-;NVRM: loading NVIDIA UNIX x86_64 Kernel Module\n"
        "3,101,2000000,-;NVRM: Xid (PCI:0000:38:00): 79, GPU has fallen off the bus.\n"
    )
    uptime.write_text("60.0 100.0\n")
    world = world_of("h100-sxm", on_every_gpu(set_field("xid_events", "not_supported")))
    env = {"ENVKIT_TEST_KMSG": str(log), "ENVKIT_TEST_UPTIME": str(uptime)}
    report = run_gpu(world, ["gpu.xid"], "kmsg_from_env", env=env)
    status, message = statuses(report)["gpu.xid"]
    assert status == "fail" and "GPU 1: XID 79 (GPU has fallen off the bus" in message, message
    assert "in the kernel log" in message and "the last 2 h" in message


def test_standin_no_nvml_and_no_nvidia_smi_skips_unless_gpus_are_required(
    run_checks: RunChecks, tmp_path: Path
) -> None:
    """Without the library (no LD_LIBRARY_PATH to the stand-in) and without nvidia-smi."""
    env = {"PATH": "/usr/bin:/bin", "LD_LIBRARY_PATH": str(tmp_path)}
    skipped = statuses(run_checks(["gpu.inventory", "gpu.ecc"], env=env))
    assert (
        skipped["gpu.inventory"][0] == "skip" and "libnvidia-ml.so.1" in skipped["gpu.inventory"][1]
    )
    required = statuses(run_checks(["gpu.inventory"], env=env, require_gpu=True))
    assert required["gpu.inventory"][0] == "fail", required
    assert "NVIDIA_DRIVER_CAPABILITIES" in required["gpu.inventory"][1]


def test_standin_distorting_environment_fails_and_can_be_allowed(run_gpu: RunGpu) -> None:
    env = {"CUDA_LAUNCH_BLOCKING": "1"}
    failed = statuses(run_gpu(scenario("h100-sxm"), ["gpu.cuda_env"], env=env))
    assert (
        failed["gpu.cuda_env"][0] == "fail"
        and "CUDA_LAUNCH_BLOCKING=1" in failed["gpu.cuda_env"][1]
    )
    allowed = {"gpu": {"allow_env": ["CUDA_LAUNCH_BLOCKING"]}}
    passed = statuses(run_gpu(scenario("h100-sxm"), ["gpu.cuda_env"], env=env, **allowed))
    assert passed["gpu.cuda_env"][0] == "pass"


# ---------------------------------------------------------------- every GPU benchmarked


def test_fake_gpu_one_gpu_slower_than_the_others_fails_naming_it(run_gpu: RunGpu) -> None:
    report = run_gpu(scenario("h100-sxm"), ["bench.matmul_bf16"], "one_slow_gpu", bench=True)
    status, message = statuses(report)["bench.matmul_bf16"]
    assert status == "fail" and "GPU 1 at" in message and "40% below the others" in message, message
    control = run_gpu(scenario("h100-sxm"), ["bench.matmul_bf16"], "fake_gpu_x2_bench", bench=True)
    assert statuses(control)["bench.matmul_bf16"][0] == "pass", statuses(control)


@pytest.mark.parametrize(
    ("plant", "status"), [("bench_slow_link", "fail"), ("bench_fast_link", "pass")]
)
def test_fake_gpu_host_link_is_judged_against_its_own_pcie_rate(
    run_gpu: RunGpu, plant: str, status: str
) -> None:
    report = run_gpu(scenario("h100-sxm"), ["bench.host_device"], plant, bench=True)
    got, message = statuses(report)["bench.host_device"]
    assert got == status, message
    check = next(c for c in report["checks"] if c["id"] == "bench.host_device")
    row = next(m for m in check["metrics"] if m["name"] == "h2d_pinned")
    assert row["peak"] == pytest.approx(3.938 * 16), "Gen5 x16, one direction"


@pytest.mark.parametrize(("plant", "status"), [("busbw_slow", "fail"), ("busbw_fast", "pass")])
def test_fake_gpu_allreduce_is_judged_against_the_nvlink_rate(
    run_gpu: RunGpu, plant: str, status: str
) -> None:
    report = run_gpu(scenario("h100-sxm"), ["bench.allreduce_busbw"], plant, bench=True)
    got, message = statuses(report)["bench.allreduce_busbw"]
    assert got == status, message
    row = next(c for c in report["checks"] if c["id"] == "bench.allreduce_busbw")["metrics"][0]
    assert row["peak"] == 450, "18 NVLink 4 links, 25 GB/s each way"


# ---------------------------------------------------------------- the burn-in


@pytest.mark.parametrize(
    ("plant", "status"), [("stress_on_cpu,stress_fault", "fail"), ("stress_on_cpu", "pass")]
)
def test_fake_gpu_burn_in_fails_on_a_wrong_product(
    run_gpu: RunGpu, plant: str, status: str
) -> None:
    report = run_gpu(scenario("h100-sxm"), ["stress.gpu"], plant, stress_s=3)
    got, message = statuses(report)["stress.gpu"]
    assert got == status, message
    if status == "fail":
        assert "differ from the first" in message
    else:
        assert "products exact, memory patterns exact" in message
        # CPU devices share the cores: their rates race, so they are never compared
        assert "spread between GPUs not judged (GPU 0: wall-clock on a CPU device" in message


def test_stress_runs_only_when_asked(run_gpu: RunGpu) -> None:
    report = run_gpu(scenario("h100-sxm"), ["stress"], "fake_gpu")
    assert "stress.gpu" not in statuses(report)


# ---------------------------------------------------------------- every figure judged


def test_fake_gpu_no_check_records_a_figure_without_a_bound(
    run_gpu: RunGpu, run_checks: RunChecks
) -> None:
    """A figure with no threshold, minimum or maximum cannot fail. The exceptions are counters
    (unit "count": `envkit history diff` reports any rise) and figures whose check's reference
    says they are judged against history (the host CPU's own throughput)."""
    from envkit.checks.core.registry import CHECKS
    from envkit.checks.suite import load

    load()
    gpu = run_gpu(
        scenario("h100-sxm"), ["gpu", "bench", "stress"], "stress_on_cpu,busbw_fast",
        bench=True, stress_s=2,
    )  # fmt: skip
    cpu = run_checks(["system.shm", "bench.cpu_matmul", "bench.cpu_memcpy"], bench=True)
    unbound = []
    seen = 0
    for check in [*gpu["checks"], *cpu["checks"]]:
        for m in check["metrics"]:
            seen += 1
            bounded = any(m.get(k) is not None for k in ("threshold", "minimum", "maximum"))
            history = "history" in CHECKS[check["id"]].reference
            if not (bounded or m["unit"] == "count" or history):
                unbound.append(f"{check['id']} {m['name']}")
    assert seen > 40, seen
    assert not unbound, unbound
    ran = {c["id"] for c in gpu["checks"]}
    assert {"bench.host_device", "bench.allreduce_busbw", "stress.gpu", "gpu.thermal"} <= ran


# ---------------------------------------------------------------- node health (Slurm)


@pytest.mark.parametrize(("base", "pending", "code"), [("h100-sxm", 1, 1), ("h100-sxm", 0, 0)])
def test_standin_envkit_health_names_a_pending_row_remap_within_slurms_limit(
    standin: Path, tmp_path: Path, torch_python: str, base: str, pending: int, code: int
) -> None:
    import time

    from tests.helpers import envkit

    world = world_of(base, on_gpu(1, set_field("remapped_rows.pending", pending)))
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(world))
    started = time.monotonic()
    done = envkit("health", "--python", torch_python, cwd=tmp_path, env=env_for(standin, path))
    took = time.monotonic() - started
    assert done.returncode == code, done.stdout + done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 1, lines
    if code:
        assert lines[0].startswith("envkit: gpu.row_remap: ") and "pending" in lines[0], lines
    else:
        assert lines[0].startswith("envkit: healthy")
    assert took < 55, f"{took:.1f} s: Slurm kills a HealthCheckProgram at 60 s"


# ---------------------------------------------------------------- the nvidia-smi fallback


@pytest.fixture
def smi_path(tmp_path: Path) -> str:
    """PATH with the nvidia-smi stand-in first and no NVML library reachable."""
    from tests.gpu_standin import SOURCE

    folder = tmp_path / "bin"
    folder.mkdir()
    (folder / "nvidia-smi").symlink_to(SOURCE.parent / "nvidia-smi")
    return f"{folder}:/usr/bin:/bin"


def test_standin_smi_fallback_judges_what_nvidia_smi_can_read(
    run_checks: RunChecks, tmp_path: Path, smi_path: str
) -> None:
    world = world_of("h100-sxm", on_gpu(0, set_field("ecc.volatile.uncorrected", 1)))
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(world))
    env = {"PATH": smi_path, "LD_LIBRARY_PATH": str(tmp_path), "NVML_STANDIN_SCENARIO": str(path)}
    only = ["gpu.inventory", "gpu.ecc", "gpu.nvlink", "gpu.xid"]
    got = statuses(run_checks(only, "kmsg_from_env", env=env))
    assert got["gpu.inventory"][0] == "pass" and "through nvidia-smi" in got["gpu.inventory"][1]
    assert got["gpu.ecc"][0] == "fail" and "1 uncorrectable ECC" in got["gpu.ecc"][1]
    assert got["gpu.nvlink"][0] == "skip" and "nvidia-smi cannot read it" in got["gpu.nvlink"][1]
    assert got["gpu.xid"][0] == "skip", "no NVML events and no readable kernel log"


def test_standin_smi_fallback_drops_fields_an_older_nvidia_smi_does_not_know(
    run_checks: RunChecks, tmp_path: Path, smi_path: str
) -> None:
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(scenario("h100-sxm")))
    env = {
        "PATH": smi_path, "LD_LIBRARY_PATH": str(tmp_path), "NVML_STANDIN_SCENARIO": str(path),
        "STANDIN_SMI_UNKNOWN": "remapped_rows.pending",
    }  # fmt: skip
    got = statuses(run_checks(["gpu.row_remap", "gpu.ecc"], env=env))
    assert got["gpu.row_remap"][0] == "skip", got
    assert got["gpu.ecc"][0] == "pass", got


def test_standin_smi_reads_every_gpu_in_one_run_a_round(
    tmp_path: Path, smi_path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without NVML, one nvidia-smi run answers for every GPU: a round of snapshots (the
    watch's every 0.2 s, a check's) asks it twice (GPUs, processes), not twice per GPU."""
    from envkit.checks.core.smi import Smi

    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(scenario("h100-sxm")))
    monkeypatch.setenv("NVML_STANDIN_SCENARIO", str(path))
    smi = Smi(smi_path.split(":")[0] + "/nvidia-smi")
    runs: list[list[str]] = []
    run = smi._run

    def counted(args: list[str]) -> str:
        runs.append(args)
        return run(args)

    monkeypatch.setattr(smi, "_run", counted)
    for _ in range(2):
        snaps = [smi.snapshot(index) for index in range(smi.count)]
    assert smi.count >= 2 and len(runs) == 2 * 2, runs  # two rounds; was 2 x 2 a GPU
    assert len({snap["bus_id"] for snap in snaps}) == smi.count  # each GPU its own row
