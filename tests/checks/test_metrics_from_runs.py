"""`envkit metrics` over real runs: the checks runner on the NVML stand-in's 8-GPU B200 scenario
(no GPU here), healthy and with one faulty GPU, recorded in a real history store; the exposition
checked by promtool (the Prometheus project's own linter); each gpu.* check's verdict on the GPU
its fault is on and no other; and `health --npd`'s exit codes and message for
node-problem-detector on the same scenarios."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from envkit.checks.programs.health import NPD_MESSAGE_BYTES
from envkit.history.store import open_history
from envkit.metrics.catalogue import HARDWARE
from envkit.metrics.exposition import render
from envkit.metrics.from_history import history_samples
from tests.checks.conftest import RunGpu
from tests.gpu_standin import (
    Patch,
    checks_env,
    links_active,
    on_gpu,
    scenario,
    set_field,
    world_of,
    xid_event,
)
from tests.helpers import REPO
from tests.metrics_world import FAULTY_GPU, faulty_b200, promtool, record, series

pytestmark = pytest.mark.slow


def _exposition(history_file: Path, openmetrics: bool = False) -> str:
    history = open_history(history_file, read_only=True)
    try:
        return render(history_samples(history), openmetrics)
    finally:
        history.close()


def test_promtool_is_clean_on_healthy_and_faulty_8_gpu_standin_runs_and_the_faulty_gpu_shows(
    run_gpu: RunGpu, tmp_path: Path
) -> None:
    history_file = tmp_path / "history.sqlite3"
    healthy = run_gpu(scenario("b200-x8"), ["gpu"])
    faulty = run_gpu(faulty_b200(), ["gpu"])
    record(history_file, healthy, "node-a")
    record(history_file, faulty, "node-b")
    text = _exposition(history_file)
    checked = promtool("check", "metrics", stdin=text)
    assert checked.returncode == 0, checked.stdout + checked.stderr

    gpu3 = f'gpu="{FAULTY_GPU}"'
    volatile = series(text, "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL")
    assert len(volatile) == 16, volatile  # 8 GPUs x 2 targets
    bad = [line for line in volatile if 'target="node-b"' in line and gpu3 in line]
    assert len(bad) == 1 and bad[0].endswith(" 2"), bad
    assert 'UUID="GPU-0000b200-aaaa-bbbb-cccc-000000000003"' in bad[0]
    assert 'pci_bus_id="00000000:48:00.0"' in bad[0] and 'model_name="NVIDIA B200"' in bad[0]
    assert all(line.endswith(" 0") for line in volatile if line not in bad)

    failing = [
        line for line in series(text, "envkit_check_status")
        if 'status="fail"' in line and line.endswith(" 1")
    ]  # fmt: skip
    assert {("node-b", "gpu.ecc"), ("node-b", "gpu.xid")} <= {
        (line.split('target="')[1].split('"')[0], line.split('check="')[1].split('"')[0])
        for line in failing
    }, failing
    assert not [line for line in failing if 'target="node-a"' in line], failing
    xids = series(text, "envkit_gpu_xid_events")
    assert len(xids) == 1 and 'xid="79"' in xids[0] and 'verdict="fail"' in xids[0], xids
    assert gpu3 in xids[0] and 'target="node-b"' in xids[0] and xids[0].endswith(" 1"), xids
    healthy_line = [s for s in series(text, "envkit_run_healthy") if 'target="node-a"' in s]
    assert healthy_line and healthy_line[0].endswith(" 1"), healthy_line

    # Every hardware family is fed by a figure the gpu checks really emit (a figure renamed in
    # the checks would leave its family empty): 8 series per target each.
    for family in HARDWARE:
        assert len(series(text, family.name)) == 16, family.name

    openmetrics = _exposition(history_file, openmetrics=True)
    assert openmetrics.endswith("# EOF\n") and openmetrics.count("# EOF") == 1


def _failing(text: str, target: str) -> dict[str, set[str]]:
    """Each gpu.* check's per-GPU verdicts in TARGET's series: the GPUs that fail it (a check
    with no per-GPU series is left out)."""
    found: dict[str, set[str]] = {}
    for line in series(text, "envkit_gpu_check_status"):
        labels = dict(re.findall(r'(\w+)="([^"]*)"', line))
        if labels["target"] == target and line.endswith(" 1"):
            failing = found.setdefault(labels["check"], set())
            if labels["status"] != "pass":
                failing.add(labels["gpu"])
    return found


# One fault class per GPU of the 8-GPU B200 scenario, in two runs: each check's per-GPU verdict
# must name its own GPU and no other (a verdict that bled across GPUs, or named none, fails).
# Every problem of a gpu.* check names its GPU; envkit metrics reads the verdicts from there.
PLANTED: list[tuple[list[Patch], dict[str, object], dict[str, set[str]]]] = [
    (
        [on_gpu(0, xid_event(79)), on_gpu(1, set_field("ecc.volatile.uncorrected", 3)),
         on_gpu(2, set_field("remapped_rows.pending", 1)), on_gpu(3, set_field("fields.230", 2)),
         on_gpu(4, set_field("inforom", "corrupted_inforom")),
         on_gpu(5, set_field("fabric.state", 1)),
         on_gpu(6, set_field("clocks_event_reasons", [0, 4, 8])),
         on_gpu(7, set_field("pcie.width", 8))],
        {},
        {"gpu.xid": {"0"}, "gpu.ecc": {"1"}, "gpu.row_remap": {"2"}, "gpu.recovery": {"3"},
         "gpu.inforom": {"4"}, "gpu.fabric": {"5"}, "gpu.clocks": {"6"}, "gpu.pcie": {"7"}},
    ),
    (
        [on_gpu(1, links_active(16)), on_gpu(2, set_field("temperature", [40, 95])),
         on_gpu(3, set_field("processes", [{"pid": 4242, "used_bytes": 3 << 30}])),
         on_gpu(4, set_field("persistence", 0)), on_gpu(5, xid_event(13))],
        {"gpu": {"persistence": "required"}},
        {"gpu.nvlink": {"1"}, "gpu.thermal": {"2"}, "gpu.processes": {"3"},
         "gpu.inventory": {"4"}, "gpu.xid": set()},
    ),
]  # fmt: skip


@pytest.mark.parametrize(("changes", "config", "expected"), PLANTED, ids=["in-turn", "after"])
def test_standin_each_gpu_check_fails_only_the_gpu_its_fault_is_on(
    run_gpu: RunGpu, tmp_path: Path, changes: list[Patch], config: dict[str, object],
    expected: dict[str, set[str]],
) -> None:  # fmt: skip
    report = run_gpu(world_of("b200-x8", *changes), ["gpu"], **config)
    record(tmp_path / "history.sqlite3", report, "node-b")
    text = _exposition(tmp_path / "history.sqlite3")
    got = _failing(text, "node-b")
    assert {check: got.get(check) for check in expected} == expected, got
    # Every other gpu.* check passed on every GPU (gpu.retired_pages skips: no series).
    assert {check: gpus for check, gpus in got.items() if check not in expected} == {
        check: set() for check in got if check not in expected
    }
    assert "gpu.retired_pages" not in got and len(got) == 13, sorted(got)
    gpus = {dict(re.findall(r'(\w+)="([^"]*)"', line))["gpu"]
            for line in series(text, "envkit_gpu_check_status")}  # fmt: skip
    assert gpus == {str(n) for n in range(8)}
    assert promtool("check", "metrics", stdin=text).returncode == 0


def _npd(torch_python: str, world: dict[str, object] | None,
         tmp_path: Path) -> subprocess.CompletedProcess[str]:  # fmt: skip
    path = tmp_path / ("scenario.json" if world is not None else "no-such-scenario.json")
    if world is not None:
        path.write_text(json.dumps(world))
    return subprocess.run(
        [torch_python, "-m", "envkit.checks", "health", "--npd", "--timeout", "50"],
        capture_output=True, text=True, env=checks_env(path, tmp_path / "node-state.json"),
        cwd=REPO, timeout=120, check=False,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("world", "code", "phrase"),
    [
        ("healthy", 0, "8 GPU(s) healthy"),
        ("faulty", 1, "gpu.ecc: GPU 3"),
        ("no nvml", 2, "no GPU read"),
    ],
)
def test_health_npd_speaks_node_problem_detectors_protocol_on_the_standin(
    world: str, code: int, phrase: str, torch_python: str, tmp_path: Path
) -> None:
    chosen = {"healthy": scenario("b200-x8"), "faulty": faulty_b200(), "no nvml": None}[world]
    done = _npd(torch_python, chosen, tmp_path)
    assert done.returncode == code, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 1 and phrase in lines[0], done.stdout
    assert len(lines[0].encode()) <= NPD_MESSAGE_BYTES
