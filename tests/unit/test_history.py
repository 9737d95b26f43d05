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
from tests.helpers import PLANTS_DIR, REPO
from tests.helpers import envkit as run_envkit

CPU_CHECKS = ["--only", "bench.cpu_matmul", "--only", "bench.cpu_memcpy"]


def envkit(
    *args: str, db: Path, plant: str | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, ENVKIT_HISTORY=str(db))
    if plant:  # the plant acts inside the checked interpreter, through its sitecustomize
        env["PYTHONPATH"] = f"{PLANTS_DIR}{os.pathsep}{REPO}"
        env["ENVKIT_TEST_PLANT"] = plant
    return run_envkit(*args, cwd=cwd or REPO, env=env, inherit=False, timeout=300)


def verify(db: Path, *extra: str, plant: str | None = None) -> subprocess.CompletedProcess[str]:
    return envkit(
        "verify", "--local", "--python", "/usr/bin/python3", "-q", *CPU_CHECKS, *extra,
        db=db, plant=plant,
    )  # fmt: skip


def seeded(db: Path, saved: Path, copies: int) -> None:
    """`copies` more passing runs like the real one in `saved` (a `verify --json` report): the
    baseline needs several, and the rules themselves are tested on synthetic rows in
    test_baseline.py, so one real run stands for them here."""
    target = json.loads(saved.read_text())["targets"][0]
    history = History(db)
    for index in range(copies):
        history.record(target, f"seed-{index}")


def test_a_real_run_against_its_history_flags_a_planted_slowdown_and_a_version_change(
    tmp_path: Path,
) -> None:
    db, saved, page = tmp_path / "h.sqlite3", tmp_path / "first.json", tmp_path / "report.html"
    first = verify(db, "--json-file", str(saved))
    assert first.returncode == 0, first.stdout + first.stderr
    seeded(db, saved, 4)
    slow = verify(
        db, "--baseline", "auto", "--html", str(page), plant="slow_matmul,other_torch_release"
    )
    assert slow.returncode == 1, slow.stdout + slow.stderr
    assert "regression on local://: bench.cpu_matmul cpu_matmul_vs_python" in slow.stdout
    listed = json.loads(envkit("history", "--json", db=db).stdout)
    assert [row["id"] for row in listed] == [6, 5, 4, 3, 2, 1]
    assert listed[0]["torch"] == "9.9.9+planted" and listed[1]["torch"] != "9.9.9+planted"
    table = envkit("history", db=db).stdout
    assert len([line for line in table.splitlines() if "local://" in line]) == 6
    diff = envkit("history", "diff", db=db)
    assert diff.returncode == 0, diff.stderr
    assert "run 5 (passed" in diff.stdout and "-> run 6" in diff.stdout
    assert f"changed  torch: {listed[1]['torch']} -> 9.9.9+planted" in diff.stdout
    assert "cpu_matmul_fp32" in envkit("history", "--only", "bench.cpu_matmul", db=db).stdout
    html = page.read_text()
    box = html.split('<section id="changed-since-pass">', 1)[1].split("</section>", 1)[0]
    assert "since run 5" in box and f"torch: {listed[1]['torch']} -&gt; 9.9.9+planted" in box
    matmul = html.split("local:// bench.cpu_matmul cpu_matmul_fp32 (GFLOP/s)", 1)[1]
    assert matmul.split("</svg>", 1)[0].count("<circle") == 6, "one point per recorded run"
    against_file = verify(db, "--baseline", str(saved), plant="slow_matmul")
    assert against_file.returncode == 1, against_file.stdout + against_file.stderr
    assert "bench.cpu_matmul cpu_matmul_vs_python" in against_file.stdout


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


RUN = {
    "started_at": "2026-11-22T00:00:00Z", "target": "local://", "duration_s": 1.0,
    "environment": {"torch": "x"}, "summary": {"pass": 1, "fail": 0, "skip": 0, "error": 0},
    "checks": [{"id": "bench.cpu_matmul", "status": "pass", "duration_s": 0.1, "message": "",
                "metrics": [{"name": "cpu_matmul_vs_python", "value": 3.0, "unit": "x"}]}],
}  # fmt: skip
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
    History(source).record(RUN, "from-a")
    History(merged).record({**RUN, "target": "local://b"}, "from-b")
    lines = tmp_path / "runs.jsonl"
    assert envkit("history", "export", str(lines), db=source).returncode == 0
    first = envkit("history", "import", str(lines), db=merged)
    assert "imported 1 runs (0 already here)" in first.stdout
    again = envkit("history", "import", str(lines), db=merged)
    assert "imported 0 runs (1 already here)" in again.stdout
    rows = json.loads(envkit("history", "--json", db=merged).stdout)
    assert len(rows) == 2
    exported = json.loads(lines.read_text().splitlines()[0])
    assert {c["id"] for c in exported["checks"]} == {"bench.cpu_matmul"}
    (tmp_path / "bad.jsonl").write_text("{not json\n")
    bad = envkit("history", "import", str(tmp_path / "bad.jsonl"), db=merged)
    assert bad.returncode == 2 and "bad.jsonl:1" in bad.stderr


def test_a_file_that_is_not_a_report_is_refused_as_a_baseline(tmp_path: Path) -> None:
    (tmp_path / "other.json").write_text('{"targets": "nope"}')
    bad = verify(tmp_path / "h.sqlite3", "--baseline", str(tmp_path / "other.json"))
    assert bad.returncode == 2 and "not a verify report" in bad.stderr


def test_regressions_warn_when_the_config_says_so(tmp_path: Path) -> None:
    db, config = tmp_path / "h.sqlite3", tmp_path / "envkit.yaml"
    config.write_text("name: warned\nruntime:\n  gpus: none\nverify:\n  regressions: warn\n")
    saved = tmp_path / "first.json"
    assert verify(db, "-c", str(config), "--json-file", str(saved)).returncode == 0
    seeded(db, saved, 2)
    slow = verify(db, "-c", str(config), "--baseline", "auto", plant="slow_matmul")
    assert slow.returncode == 0, slow.stdout + slow.stderr
    assert "regression on local://: bench.cpu_matmul cpu_matmul_vs_python" in slow.stdout
