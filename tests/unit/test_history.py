"""History: every verify run recorded (real `envkit verify --local` on this machine's torch),
listed, diffed, judged against baselines, shared by export/import, and safe when several
processes write at once or when the file is broken."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from envkit.history.store import SCHEMA_VERSION, History
from tests.checks.conftest import PLANTS_DIR
from tests.conftest import REPO

CPU_CHECKS = ["--only", "bench.cpu_matmul", "--only", "bench.cpu_memcpy"]


def envkit(
    *args: str, db: Path, plant: str | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, ENVKIT_HISTORY=str(db))
    if plant:  # the plant acts inside the checked interpreter, through its sitecustomize
        env["PYTHONPATH"] = f"{PLANTS_DIR}{os.pathsep}{REPO}"
        env["ENVKIT_TEST_PLANT"] = plant
    return subprocess.run(
        [sys.executable, "-m", "envkit", *args],
        env=env,
        cwd=cwd or REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def verify(db: Path, *extra: str, plant: str | None = None) -> subprocess.CompletedProcess[str]:
    return envkit(
        "verify", "--local", "--python", "/usr/bin/python3", "-q", *CPU_CHECKS, *extra,
        db=db, plant=plant,
    )  # fmt: skip


def test_three_runs_three_rows_and_diff_names_a_planted_version_change(tmp_path: Path) -> None:
    db = tmp_path / "h.sqlite3"
    page = tmp_path / "report.html"
    for plant in (None, None, "other_torch_release"):
        done = verify(db, "--html", str(page), plant=plant)
        assert done.returncode == 0, done.stdout + done.stderr
    listed = json.loads(envkit("history", "--json", db=db).stdout)
    assert [row["id"] for row in listed] == [3, 2, 1]
    assert listed[0]["torch"] == "9.9.9+planted" and listed[1]["torch"] != "9.9.9+planted"
    table = envkit("history", db=db).stdout
    assert len([line for line in table.splitlines() if "local://" in line]) == 3
    diff = envkit("history", "diff", db=db)
    assert diff.returncode == 0, diff.stderr
    assert "run 2 (passed" in diff.stdout and "-> run 3" in diff.stdout
    assert f"changed  torch: {listed[1]['torch']} -> 9.9.9+planted" in diff.stdout
    cpu = envkit("history", "--check", "bench.cpu_matmul", db=db).stdout
    assert "cpu_matmul_fp32" in cpu
    html = page.read_text()
    box = html.split('<section id="changed-since-pass">', 1)[1].split("</section>", 1)[0]
    assert "since run 2" in box and f"torch: {listed[1]['torch']} -&gt; 9.9.9+planted" in box
    matmul = html.split("local:// bench.cpu_matmul cpu_matmul_fp32 (GFLOP/s)", 1)[1]
    assert matmul.split("</svg>", 1)[0].count("<circle") == 3, "one point per recorded run"


def test_a_planted_2x_slowdown_is_a_regression_and_healthy_reruns_are_not(tmp_path: Path) -> None:
    db, report = tmp_path / "h.sqlite3", tmp_path / "r.json"
    for _ in range(5):
        assert verify(db).returncode == 0
    slow = verify(db, "--baseline", "auto", plant="slow_matmul")
    assert slow.returncode == 1, slow.stdout + slow.stderr
    assert "regression on local://: bench.cpu_matmul cpu_matmul_vs_python" in slow.stdout
    alarms = []
    for _ in range(3):  # 20 reruns in benchmarks/bench_history.py; the rate is in its README
        healthy = verify(db, "--baseline", "auto", "--json", str(report))
        flagged = json.loads(report.read_text())["regressions"]
        assert (healthy.returncode == 1) == bool(flagged), "exit 1 exactly when one is flagged"
        alarms += flagged
    assert not alarms, f"healthy reruns flagged: {alarms}"


def test_a_baseline_that_is_not_auto_or_a_run_is_refused_before_running(tmp_path: Path) -> None:
    db = tmp_path / "h.sqlite3"
    done = verify(db, "--baseline", "yesterday")
    assert done.returncode == 2 and "--baseline 'yesterday'" in done.stderr
    assert not db.exists(), "nothing ran, nothing recorded"


def test_no_history_records_nothing(tmp_path: Path) -> None:
    db = tmp_path / "h.sqlite3"
    assert verify(db, "--no-history").returncode == 0
    assert not db.exists()


@pytest.mark.parametrize("damage", ["garbage", "newer-schema"])
def test_a_broken_history_warns_and_verify_still_runs(tmp_path: Path, damage: str) -> None:
    db = tmp_path / "h.sqlite3"
    if damage == "garbage":
        db.write_bytes(b"this is not a database, just bytes" * 200)
    else:
        with sqlite3.connect(db) as made:
            made.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 7}")
    done = verify(db)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "warning: history file" in done.stderr and "Traceback" not in done.stderr
    listed = envkit("history", db=db)
    assert listed.returncode == 2 and "Traceback" not in listed.stderr
    assert ("newer than this envkit" if damage == "newer-schema" else "cannot be used") in (
        listed.stderr
    )


WRITER = """
import sys
from pathlib import Path
from envkit.history.store import History
history = History(Path(sys.argv[1]))
for n in range(25):
    report = {
        "started_at": "2026-11-22T00:00:00Z", "target": "w" + sys.argv[2], "duration_s": 1.0,
        "environment": {"torch": "x"}, "summary": {"pass": 1, "fail": 0, "skip": 0, "error": 0},
        "checks": [{"id": "bench.cpu_matmul", "status": "pass", "duration_s": 0.1,
                    "message": "", "metrics": [{"name": "m", "value": n, "unit": "GB/s"}]}],
    }
    history.record(report, f"{sys.argv[2]}-{n}")
"""


def test_concurrent_writers_lose_nothing(tmp_path: Path) -> None:
    db = tmp_path / "h.sqlite3"
    env = dict(os.environ, PYTHONPATH=str(REPO))
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(db), str(i)], env=env) for i in range(4)
    ]
    assert [w.wait(timeout=120) for w in writers] == [0, 0, 0, 0]
    history = History(db)
    assert len(history.runs(limit=1000)) == 100
    counts = history.db.execute("SELECT COUNT(*) FROM metrics").fetchone()[0]
    assert counts == 100


def test_export_then_import_merges_once(tmp_path: Path) -> None:
    source, merged = tmp_path / "a.sqlite3", tmp_path / "b.sqlite3"
    assert verify(source).returncode == 0
    assert verify(merged).returncode == 0
    lines = tmp_path / "runs.jsonl"
    assert envkit("history", "export", str(lines), db=source).returncode == 0
    first = envkit("history", "import", str(lines), db=merged)
    assert "imported 1 runs (0 already here)" in first.stdout
    again = envkit("history", "import", str(lines), db=merged)
    assert "imported 0 runs (1 already here)" in again.stdout
    rows = json.loads(envkit("history", "--json", db=merged).stdout)
    assert len(rows) == 2
    exported = json.loads(lines.read_text().splitlines()[0])
    assert {c["id"] for c in exported["checks"]} == {"bench.cpu_matmul", "bench.cpu_memcpy"}
    (tmp_path / "bad.jsonl").write_text("{not json\n")
    bad = envkit("history", "import", str(tmp_path / "bad.jsonl"), db=merged)
    assert bad.returncode == 2 and "bad.jsonl:1" in bad.stderr


def test_a_saved_report_serves_as_a_baseline(tmp_path: Path) -> None:
    db, saved = tmp_path / "h.sqlite3", tmp_path / "base.json"
    assert verify(db, "--json", str(saved)).returncode == 0
    slow = verify(db, "--baseline", str(saved), plant="slow_matmul")
    assert slow.returncode == 1, slow.stdout + slow.stderr
    assert "bench.cpu_matmul cpu_matmul_vs_python" in slow.stdout
    (tmp_path / "other.json").write_text('{"targets": "nope"}')
    bad = verify(db, "--baseline", str(tmp_path / "other.json"))
    assert bad.returncode == 2 and "not a verify report" in bad.stderr


def test_regressions_warn_when_the_config_says_so(tmp_path: Path) -> None:
    db, config = tmp_path / "h.sqlite3", tmp_path / "envkit.yaml"
    config.write_text("name: warned\nruntime:\n  gpus: none\nverify:\n  regressions: warn\n")
    for _ in range(3):
        assert verify(db, "-c", str(config)).returncode == 0
    slow = verify(db, "-c", str(config), "--baseline", "auto", plant="slow_matmul")
    assert slow.returncode == 0, slow.stdout + slow.stderr
    assert "regression on local://: bench.cpu_matmul cpu_matmul_vs_python" in slow.stdout
