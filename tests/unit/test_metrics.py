"""`envkit metrics` piece by piece: the exposition's escaping and shape (checked by promtool),
the catalogue against the checks that emit its figures, figures against their peaks and their
node's other GPUs, the history store before and after it kept peaks, the textfile written
atomically, the dashboard, node-problem-detector's plugin script under a real sh, and the
command's refusals."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from envkit.checks.core.contract import check_result
from envkit.cluster.k8s import NPD_PLUGIN, VERDICT
from envkit.history.store import open_history
from envkit.metrics import catalogue as c
from envkit.metrics.collect import Reading, exported, read_history
from envkit.metrics.dashboard import dashboard, panel_query
from envkit.metrics.exposition import escape_label, render, sample
from envkit.metrics.from_history import history_samples
from envkit.metrics.textfile import FILE_NAME, MARK, write_textfile
from tests.helpers import envkit
from tests.metrics_world import promtool, record, series

NAME = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")
LABEL = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")


def _metric(name: str, value: float, unit: str, peak: float | None = None) -> Any:
    return {"name": name, "value": value, "unit": unit, "peak": peak,
            "fraction_of_peak": value / peak if peak else None, "threshold": None,
            "minimum": None, "maximum": None}  # fmt: skip


def _report(checks: list[Any], **environment: Any) -> dict[str, Any]:
    counts = {s: sum(1 for x in checks if x["status"] == s) for s in c.STATUSES}
    return {
        "schema_version": 1, "target": "t", "started_at": "2026-11-25T10:00:00+00:00",
        "duration_s": 12.5, "environment": {"hostname": "node-1", **environment},
        "summary": counts, "checks": checks,
    }  # fmt: skip


def _exposition(history_file: Path) -> str:
    history = open_history(history_file, read_only=True)
    try:
        return render(history_samples(history))
    finally:
        history.close()


def test_catalogue_names_and_labels_are_valid_and_unique() -> None:
    names = [f.name for f in c.FAMILIES]
    assert len(names) == len(set(names))
    for family in c.FAMILIES:
        assert NAME.match(family.name) and family.help and family.source, family
        assert all(LABEL.match(label) for label in family.labels), family
        assert len(set(family.labels)) == len(family.labels), family
        assert family.dcgm == family.name.startswith("DCGM_FI_"), family
        assert not family.name.endswith("_total"), "every family is a gauge"


def test_hostile_label_values_are_escaped_and_promtool_accepts_them() -> None:
    hostile = 'node "a"\\b\nc ☃'
    text = render([sample(c.RUN_HEALTHY, 1, target=hostile, Hostname="h")])
    line = series(text, "envkit_run_healthy")[0]
    assert line == 'envkit_run_healthy{target="node \\"a\\"\\\\b\\nc ☃",Hostname="h"} 1'
    assert escape_label(hostile) in line and "\n" not in line
    checked = promtool("check", "metrics", stdin=text)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_a_series_is_written_once_with_help_and_type_once_per_family() -> None:
    text = render([
        sample(c.SOURCE_UP, 1, source="history"), sample(c.SOURCE_UP, 0, source="history"),
        sample(c.SOURCE_UP, 0, source="members"),
    ])  # fmt: skip
    assert text.count("# TYPE envkit_metrics_source_up gauge") == 1
    assert series(text, "envkit_metrics_source_up") == [
        'envkit_metrics_source_up{source="history"} 1',
        'envkit_metrics_source_up{source="members"} 0',
    ]
    assert render([], openmetrics=True) == "# EOF\n" and render([]) == ""


def test_a_label_the_family_does_not_declare_is_refused() -> None:
    with pytest.raises(ValueError, match="has no label"):
        sample(c.RUN_HEALTHY, 1, target="t", run_id="42")  # no run ids as labels


def test_figures_carry_their_fraction_of_peak_and_of_the_nodes_other_gpus(
    tmp_path: Path,
) -> None:
    figures = [_metric(f"tflops.gpu{n}", v, "TFLOP/s", 1000.0)
               for n, v in enumerate((700.0, 720.0, 710.0, 350.0))]  # fmt: skip
    report = _report([check_result("bench.matmul", "fail", 3.0, "GPU 3 slow", figures)])
    record(tmp_path / "h.sqlite3", report, "docker://box")
    text = _exposition(tmp_path / "h.sqlite3")
    peak = {line.split('gpu="')[1][0]: float(line.rsplit(" ", 1)[1])
            for line in series(text, "envkit_check_figure_peak_ratio")}  # fmt: skip
    assert peak == {"0": 0.7, "1": 0.72, "2": 0.71, "3": 0.35}
    peers = {line.split('gpu="')[1][0]: float(line.rsplit(" ", 1)[1])
             for line in series(text, "envkit_check_figure_peer_ratio")}  # fmt: skip
    assert peers["3"] == pytest.approx(350 / 710)
    assert all(peers[g] > 0.98 for g in "012"), peers
    assert promtool("check", "metrics", stdin=text).returncode == 0


def test_read_history_says_what_is_wrong_and_exports_no_stale_values(tmp_path: Path) -> None:
    broken = tmp_path / "broken.sqlite3"
    broken.write_bytes(b"not a database " * 100)
    reading = read_history(broken)
    assert reading.problem and "cannot be used" in reading.problem
    text = render(exported([reading]))
    assert series(text, "envkit_metrics_source_up") == [
        'envkit_metrics_source_up{source="history"} 0'
    ]
    assert series(text, "envkit_run_healthy") == []
    nothing = read_history(tmp_path / "never-written.sqlite3")
    assert nothing.problem is None and nothing.samples == []


def test_the_textfile_is_replaced_whole_and_readable_by_another_user(tmp_path: Path) -> None:
    folder = tmp_path / "textfile"
    folder.mkdir()
    (folder / FILE_NAME).write_text(MARK + "old\n")  # an earlier run's
    written = write_textfile(folder, render([sample(c.SOURCE_UP, 1, source="history")]))
    assert written.read_text().startswith(MARK + "# HELP envkit_metrics_source_up")
    assert promtool("check", "metrics", stdin=written.read_text()).returncode == 0
    assert sorted(p.name for p in folder.iterdir()) == [FILE_NAME]  # no temporary left
    assert written.stat().st_mode & 0o777 == 0o644


def test_a_file_of_that_name_someone_else_wrote_is_never_replaced(tmp_path: Path) -> None:
    theirs = tmp_path / FILE_NAME
    theirs.write_text("my_own_metric 1\n")
    done = envkit("metrics", "--textfile", str(tmp_path), cwd=tmp_path,
                  env={"ENVKIT_HISTORY": str(tmp_path / "h.sqlite3")})  # fmt: skip
    assert done.returncode == 2 and "was not written by envkit metrics" in done.stderr
    assert theirs.read_text() == "my_own_metric 1\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [FILE_NAME]


def test_the_dashboard_has_a_panel_for_every_family_that_asks_for_one() -> None:
    board = dashboard()
    assert board["__inputs"][0]["name"] == "DS_PROMETHEUS"
    assert json.loads(json.dumps(board)) == board
    exprs = [p["targets"][0]["expr"] for p in board["panels"]]
    assert exprs == [panel_query(f) for f in c.FAMILIES if f.panel]
    assert len({p["id"] for p in board["panels"]}) == len(board["panels"])
    assert {v["name"] for v in board["templating"]["list"]} == {"target", "project"}


def _plugin(
    tmp_path: Path, verdict: str | None, age_s: float = 0
) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "envkit-health"
    script = tmp_path / "plugin.sh"
    script.write_text(NPD_PLUGIN.replace(VERDICT, str(path)) % {"verdict": path, "stale": 900})
    if verdict is not None:
        path.write_text(verdict)
        then = time.time() - age_s
        os.utime(path, (then, then))
    return subprocess.run(["sh", str(script)], capture_output=True, text=True, timeout=10,
                          check=False)  # fmt: skip


@pytest.mark.parametrize(
    ("verdict", "age_s", "code", "said"),
    [
        ("0\nenvkit: 8 GPU(s) healthy\n", 0, 0, "envkit: 8 GPU(s) healthy"),
        ("1\nenvkit: gpu.ecc: GPU 3: 2 uncorrectable ECC errors\n", 0, 1, "gpu.ecc: GPU 3"),
        ("2\nenvkit: no GPU read\n", 0, 2, "no GPU read"),
        ("0\nenvkit: 8 GPU(s) healthy\n", 3600, 2, "s old"),
        (None, 0, 2, "no health verdict yet"),
        ("banana\n", 0, 2, "unreadable"),
        ("1\n" + "x" * 300 + "\n", 0, 1, "x" * 80),
    ],
)
def test_the_npd_plugin_script_reports_the_latest_fresh_verdict_under_a_real_sh(
    tmp_path: Path, verdict: str | None, age_s: float, code: int, said: str
) -> None:
    done = _plugin(tmp_path, verdict, age_s)
    assert done.returncode == code, done.stdout + done.stderr
    assert said in done.stdout and len(done.stdout.strip()) <= 80, done.stdout


@pytest.mark.parametrize(
    ("args", "phrase"),
    [
        (["--serve", ":9842", "--rules"], "--serve and --rules ask for different things"),
        (["--textfile", ".", "--openmetrics"], "reads only the text format"),
        (["--serve", "localhost:80"], "localhost is not an IP address"),
        (["--serve", "127.0.0.1:99999"], "not HOST:PORT"),
        (["--textfile", "/nonexistent/folder"], "not a folder"),
        (["--interval", "0", "--serve", ":1"], "too short"),
    ],
)
def test_bad_options_are_refused_with_the_fix(tmp_path: Path, args: list[str], phrase: str) -> None:
    done = envkit("metrics", *args, cwd=tmp_path, env={"ENVKIT_HISTORY": str(tmp_path / "h")})
    assert done.returncode == 2, done.stdout + done.stderr
    assert phrase in done.stderr and "fix:" in done.stderr and "Traceback" not in done.stderr


def test_printing_once_exports_the_history_and_says_the_sources(tmp_path: Path) -> None:
    record(tmp_path / "h.sqlite3", _report([check_result("system.shm", "pass", 0.1, "ok", [])]),
           "docker://box")  # fmt: skip
    done = envkit("metrics", cwd=tmp_path, env={"ENVKIT_HISTORY": str(tmp_path / "h.sqlite3")})
    assert done.returncode == 0, done.stderr
    assert (
        'envkit_check_status{target="docker://box",Hostname="node-1",check="system.shm",'
        'group="system",status="pass"} 1' in done.stdout
    )
    assert series(done.stdout, "envkit_metrics_source_up") == [
        'envkit_metrics_source_up{source="history"} 1'
    ]  # no envkit.yaml here: no members source
    assert Reading("x").problem is None


def _labels(line: str) -> dict[str, str]:
    return dict(re.findall(r'(\w+)="([^"]*)"', line))


def test_each_gpu_carries_its_verdict_per_check_and_the_slurm_jobs_on_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """dcgm-exporter's job mapping (a file per GPU index, job ids one a line) labels the GPUs
    of this machine's runs, one series per job; each gpu.* check's verdict is per GPU."""
    mapping = tmp_path / "job-map"
    mapping.mkdir()
    (mapping / "3").write_text("4242\n4243\n")  # two jobs share GPU 3
    (mapping / "1.0").write_text("77\n")  # MIG instance 0 of GPU 1
    (mapping / "README").write_text("not a GPU\n")
    (mapping / "5").mkdir()
    gpus = [{"index": n, "uuid": f"GPU-{n}", "bus_id": f"0000:0{n}:00.0", "name": "NVIDIA B200"}
            for n in range(4)]  # fmt: skip
    checks = [
        check_result("gpu.ecc", "fail", 0.1, "GPU 3 (NVIDIA B200, 0000:03:00.0): 2 "
                     "uncorrectable ECC error(s) since the driver loaded", []),
        check_result("gpu.xid", "fail", 0.1, "XID errors: GPU 1: XID 79 during gpu.ecc: fail "
                     "(RESTART_BM); also (warn): GPU 2: XID 13 during gpu.ecc: warn", []),
        check_result("gpu.inventory", "fail", 0.1, "2 GPU(s), this node's baseline had 8", []),
        check_result("gpu.fabric", "skip", 0.1, "no NVSwitch fabric", []),
        check_result("gpu.pcie", "pass", 0.1, "warn: GPU 0: link not judged", []),
        check_result("system.shm", "fail", 0.1, "GPU 3 is not this check's business", []),
    ]  # fmt: skip
    history = tmp_path / "h.sqlite3"
    record(history, _report(checks, hostname=socket.gethostname(), nvml_gpus=gpus), "local")
    record(history, _report(checks, hostname="elsewhere", nvml_gpus=gpus), "ssh://elsewhere")
    with monkeypatch.context() as here:
        here.setenv("PATH", "/nonexistent")  # no squeue: the jobs' users stay unlabelled
        text = render(exported([read_history(history, mapping)]))
    assert promtool("check", "metrics", stdin=text).returncode == 0
    verdicts = {
        (s["target"], s["gpu"], s["check"], s.get("hpc_job")): s["status"]
        for line in series(text, "envkit_gpu_check_status") if line.endswith(" 1")
        for s in [_labels(line)]
    }  # fmt: skip
    local = {k[1:]: v for k, v in verdicts.items() if k[0] == "local"}
    assert local == {
        ("0", "gpu.ecc", None): "pass", ("1", "gpu.ecc", "77"): "pass",
        ("2", "gpu.ecc", None): "pass", ("3", "gpu.ecc", "4242"): "fail",
        ("3", "gpu.ecc", "4243"): "fail",
        ("0", "gpu.xid", None): "pass", ("1", "gpu.xid", "77"): "fail",
        ("2", "gpu.xid", None): "pass", ("3", "gpu.xid", "4242"): "pass",
        ("3", "gpu.xid", "4243"): "pass",
        ("0", "gpu.pcie", None): "pass", ("1", "gpu.pcie", "77"): "pass",
        ("2", "gpu.pcie", None): "pass", ("3", "gpu.pcie", "4242"): "pass",
        ("3", "gpu.pcie", "4243"): "pass",
    }  # fmt: skip
    # Another machine's run: the jobs here are not on its GPUs.
    assert verdicts[("ssh://elsewhere", "3", "gpu.ecc", None)] == "fail"
    assert not [k for k in verdicts if k[0] != "local" and k[3] is not None]
    info = [_labels(line) for line in series(text, "envkit_gpu_info")]
    assert sorted(s.get("hpc_job", "") for s in info if s["target"] == "local") == [
        "", "", "4242", "4243", "77"
    ]  # fmt: skip
    assert not any("hpc_user" in s for s in info)


def test_a_job_mapping_that_cannot_be_read_is_said(tmp_path: Path) -> None:
    record(tmp_path / "h.sqlite3", _report([]), "local")
    (tmp_path / "job-map").write_text("a file, not the folder\n")  # no job has run yet
    assert read_history(tmp_path / "h.sqlite3", tmp_path / "job-map").problem is None
    looped = tmp_path / "looped"
    looped.mkdir()
    (looped / "0").symlink_to(looped / "0")
    reading = read_history(tmp_path / "h.sqlite3", looped)
    assert reading.problem and reading.problem.startswith(f"job mapping {looped}: "), reading
