"""The team's records survive damage (issue 35): a history store with a table gone, a column
renamed, a damaged page, unreadable JSON or text where a figure belongs is refused cleanly (exit
2, the file, what is wrong, how to recover) or read around with a warning, by every command that
reads it; and a verify's verdict and its HTML report never depend on it. Each damage is made to
a real store written by envkit, with SQLite's own tools."""

from __future__ import annotations

import copy
import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from envkit.history.store import History
from tests.helpers import envkit

REPORT: dict[str, Any] = {
    "started_at": "2026-11-22T00:00:00Z",
    "target": "local://",
    "duration_s": 1.0,
    "environment": {"torch": "x", "hostname": "h"},
    "summary": {"pass": 1, "fail": 0, "skip": 0, "error": 0},
    "checks": [
        {
            "id": "bench.cpu_matmul",
            "status": "pass",
            "duration_s": 0.1,
            "message": "",
            "metrics": [{"name": "cpu_matmul_vs_python", "value": 3.0, "unit": "x"}],
        }
    ],
}


def _store(db: Path, runs: int = 4) -> None:
    history = History(db)
    for number in range(runs):
        report = copy.deepcopy(REPORT)
        report["checks"][0]["metrics"][0]["value"] = 3.0 + number / 10
        history.record(report, f"seed-{number}")
    history.close()


def _sql(*statements: str) -> Callable[[Path], None]:
    def damage(db: Path) -> None:
        with sqlite3.connect(db) as made:
            made.execute("PRAGMA foreign_keys=OFF")
            for statement in statements:
                made.execute(statement)

    return damage


def _corrupt_page(number: int) -> Callable[[Path], None]:
    def damage(db: Path) -> None:
        with sqlite3.connect(db) as made:
            made.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            size = made.execute("PRAGMA page_size").fetchone()[0]
        with db.open("r+b") as raw:
            raw.seek(size * (number - 1) + 8)
            raw.write(os.urandom(size - 16))

    return damage


DAMAGE: dict[str, Callable[[Path], None]] = {
    "metrics table dropped": _sql("DROP TABLE metrics"),
    "runs column renamed": _sql("ALTER TABLE runs RENAME COLUMN summary TO totals"),
    "text where a figure belongs": _sql("UPDATE metrics SET value = 'fast' WHERE run_id = 2"),
    "an infinite figure": _sql("UPDATE metrics SET value = 9e999 WHERE run_id = 3"),
    "unreadable JSON": _sql("UPDATE runs SET environment = '{broken' WHERE id = 2"),
    "JSON of the wrong shape": _sql("UPDATE runs SET summary = '[1, 2]' WHERE id = 3"),
    "a blob for a check id": _sql("UPDATE checks SET check_id = x'00ff' WHERE run_id = 1"),
    "a damaged page": _corrupt_page(2),
}
READERS = [
    ("history",),
    ("history", "--json"),
    ("history", "--only", "bench.cpu_matmul"),
    ("history", "diff"),
    ("history", "diff", "1", "4"),
]


@pytest.mark.parametrize("damage", DAMAGE, ids=list(DAMAGE))
def test_every_reader_refuses_a_damaged_store_cleanly_or_reads_around_it(
    tmp_path: Path, damage: str
) -> None:
    db = tmp_path / "h.sqlite3"
    _store(db)
    DAMAGE[damage](db)
    for reader in [*READERS, ("history", "export", str(tmp_path / "out.jsonl"))]:
        done = envkit(*reader, "--history-file", str(db), cwd=tmp_path)
        said = done.stdout + done.stderr
        assert "Traceback" not in said, (damage, reader, said[-1500:])
        assert done.returncode in (0, 2), (damage, reader, said[-800:])
        if done.returncode == 2:
            assert str(db) in done.stderr and "fix:" in done.stderr, (reader, done.stderr)
        elif ("JSON" in damage or "shape" in damage) and "1" not in reader:
            # Every reader that reads the damaged run says it read around it.
            assert "read around run" in done.stderr, (reader, done.stderr)


@pytest.mark.parametrize("damage", DAMAGE, ids=list(DAMAGE))
def test_a_verify_verdict_and_its_html_never_depend_on_the_store(
    tmp_path: Path, damage: str
) -> None:
    db = tmp_path / "h.sqlite3"
    _store(db)
    DAMAGE[damage](db)
    html = tmp_path / "r.html"
    done = envkit(
        "verify", "--local", "--python", "/usr/bin/python3", "--only", "system.shm",
        "--history-file", str(db), "--html", str(html), "--baseline", "auto", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-1500:] + done.stderr[-1500:]
    assert "Traceback" not in done.stderr and html.is_file()


def test_a_store_this_user_may_only_read_is_listed_as_it_is(tmp_path: Path) -> None:
    """A shared store in a folder others own: read without writing (no WAL switch, no
    migration), as a user other than root would meet it."""
    folder = tmp_path / "shared"
    folder.mkdir()
    db = folder / "h.sqlite3"
    _store(db)
    folder.chmod(0o555)
    try:
        drop = ["setpriv", "--inh-caps=-dac_override,-fowner",
                "--bounding-set=-dac_override,-fowner"]  # fmt: skip
        argv = [*drop, str(Path(sys.executable)), "-m", "envkit", "history", "--history-file"]
        done = subprocess.run([*argv, str(db)], capture_output=True, text=True, timeout=120,
                              cwd=tmp_path, check=False)  # fmt: skip
        assert done.returncode == 0 and "local://" in done.stdout, done.stderr
    finally:
        folder.chmod(0o755)
