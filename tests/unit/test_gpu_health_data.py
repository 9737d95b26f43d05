"""The data GPU health judges by (issue 36): the XID table generated from NVIDIA's catalogue and
kept in step with docs/gpu-health.md, the SKU table's exact identities, the kernel log's
records and window, the node state's tolerance of a damaged file. Through the real modules; the
checks' end-to-end behaviour is in tests/checks/test_gpu_health_calibration.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from envkit.checks.core import kernel_log
from envkit.checks.core.node_state import NodeState
from envkit.checks.suite import skus, xid_rules
from envkit.checks.suite.xid_rules import XIDS
from tests.helpers import REPO


def test_the_xid_module_and_the_docs_tables_are_what_the_catalogue_gives() -> None:
    done = subprocess.run(
        [sys.executable, "scripts/gen_xid_table.py", "--check"],
        cwd=REPO, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


def test_every_catalogue_xid_has_a_bucket_and_the_buckets_map_as_the_issue_says() -> None:
    catalogue = json.loads((REPO / "scripts/data/xid_catalogue.json").read_text())
    assert {row["xid"] for row in catalogue["xids"]} <= set(XIDS)
    verdict = xid_rules.BUCKET_VERDICTS
    assert verdict["IGNORE"] == verdict["RESTART_APP"] == "warn"
    for bucket in ("RESET_GPU", "RESTART_BM", "CONTACT_SUPPORT", "WORKFLOW_XID_48", "unknown"):
        assert verdict[bucket] == "fail", bucket
    unused = {row["resolution"] for row in catalogue["xids"]} - set(verdict)
    assert not unused, f"buckets without a verdict: {unused}"


@pytest.mark.parametrize(
    ("xid", "verdict"),
    [(94, "warn"), (121, "warn"), (92, "warn"), (8, "warn"), (32, "warn"), (38, "warn"),
     (69, "warn"), (60, "warn"), (137, "warn"), (109, "fail"), (79, "fail"), (48, "fail"),
     (95, "fail"), (119, "fail"), (999, "fail")],
)  # fmt: skip
def test_an_xid_alone_is_judged_by_its_bucket(xid: int, verdict: str) -> None:
    [(_, got, why)] = xid_rules.judge([{"gpu": 0, "xid": xid, "text": None}])
    assert got == verdict, why


def test_the_repeat_rule_counts_per_gpu() -> None:
    events = [{"gpu": 0, "xid": 31, "text": None} for _ in range(3)]
    events.append({"gpu": 1, "xid": 31, "text": None})
    verdicts = [v for _, v, _ in xid_rules.judge(events)]
    assert verdicts == ["fail", "fail", "fail", "warn"]


@pytest.mark.parametrize(
    ("device", "name", "expected"),
    [(0x2342, "NVIDIA GH200 480GB", "GH200 (96 GB HBM3)"),
     (None, "NVIDIA GH200 480GB", "GH200 (96 GB HBM3)"),
     (None, "NVIDIA H200", "H200 SXM"), (None, "NVIDIA H200 NVL", "H200 NVL"),
     (0x2941, "NVIDIA GB200", "GB200"), (0x2E12, "NVIDIA GB10", "GB10 (DGX Spark)"),
     (0x2901, "NVIDIA B200", "B200"), (0x3182, "NVIDIA B300 SXM6 AC", "B300 SXM6"),
     (None, "NVIDIA L40S", "L40S"), (None, "NVIDIA L40", "L40"), (None, "NVIDIA L4", "L4"),
     (0x2999, "NVIDIA H100 80GB HBM3", None), (None, "NVIDIA H1000", None)],
)  # fmt: skip
def test_skus_by_device_id_then_whole_words_never_a_near_name(
    device: int | None, name: str, expected: str | None
) -> None:
    found = skus.sku_for(device, name)
    assert (found.name if found else None) == expected


def test_grace_parts_have_a_c2c_host_link_and_no_fixed_nvlink_count_where_it_varies() -> None:
    gh200 = skus.sku_for(0x2342)
    assert gh200 is not None and gh200.host_link == skus.C2C and gh200.varies
    b200 = skus.sku_for(0x2901)
    assert b200 is not None and b200.nvlinks == (18,) and not b200.varies


def _plant_log(tmp_path: Path, text: str, uptime: float, boot: str = "boot-a") -> None:
    (tmp_path / "kmsg").write_text(text)
    (tmp_path / "uptime").write_text(f"{uptime} 0\n")
    (tmp_path / "boot").write_text(boot + "\n")


@pytest.fixture
def planted(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setattr(kernel_log, "KMSG", str(tmp_path / "kmsg"))
    monkeypatch.setattr(kernel_log, "UPTIME", str(tmp_path / "uptime"))
    monkeypatch.setattr(kernel_log, "BOOT_ID", str(tmp_path / "boot"))
    return tmp_path


LOG = (
    "6,10,1000000,-;NVRM: loading NVIDIA UNIX x86_64 Kernel Module\n"
    " SUBSYSTEM=pci\n"
    "3,11,1000000000,-;NVRM: Xid (PCI:0000:38:00): 79, GPU has fallen off the bus.\n"
    "3,12,8000000000,-;NVRM: Xid (PCI:0000:18:00 GPU-I:05): 94, pid=7, Contained: SM\n"
    "3,13,8100000000,-;NVRM: Xid (0000:18:00): 13, old format without PCI\n"
    "garbage line\n"
)


def test_kernel_records_parse_with_mig_and_old_formats_and_skip_continuations(
    planted: Path,
) -> None:
    _plant_log(planted, LOG, 9000.0)
    records, why = kernel_log.read_records()
    assert why == "" and [r.seq for r in records] == [10, 11, 12, 13]
    lines, loaded = kernel_log.nvidia_lines(records, 0)
    assert [(line["bus"], line["xid"]) for line in lines] == [
        ("0000:38:00", 79), ("0000:18:00", 94), ("0000:18:00", 13)
    ]  # fmt: skip
    assert loaded == {"*": 10}


def test_the_window_is_two_hours_without_a_cursor_and_the_cursor_on_the_same_boot(
    planted: Path,
) -> None:
    _plant_log(planted, LOG, 9000.0)
    records, _ = kernel_log.read_records()
    first, how = kernel_log.window(records, None)
    assert first == 12 and "the last 2 h" in how  # 1000 s is older than 9000 - 7200
    first, how = kernel_log.window(records, {"boot_id": "boot-a", "seq": 12})
    assert first == 13 and "previous envkit run" in how
    first, _ = kernel_log.window(records, {"boot_id": "boot-before-reboot", "seq": 12})
    assert first == 12  # another boot: the cursor does not apply


@pytest.mark.parametrize("content", ["{broken", "[]", json.dumps({"version": 99}), "x" * (1 << 21)])
def test_a_damaged_node_state_is_a_note_and_a_fresh_start(tmp_path: Path, content: str) -> None:
    path = tmp_path / "state.json"
    path.write_text(content)
    state = NodeState(str(path))
    assert state.baseline is None and state.cursor is None and str(path) in state.note
    state.data["kmsg"] = {"boot_id": "b", "seq": 3}
    assert state.save() == ""
    assert NodeState(str(path)).cursor == {"boot_id": "b", "seq": 3}
