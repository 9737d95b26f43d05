"""Every verify run, kept in one SQLite file per user: what ran where, on which image and GPU,
and every check's status and figures. Standard library only.

Safe under concurrent runs: WAL mode (readers never block the writer), a busy timeout, and each
run written in one IMMEDIATE transaction. The schema's version lives in PRAGMA user_version;
MIGRATIONS[i] brings version i to i + 1, and a file from a newer envkit is refused, not guessed."""

from __future__ import annotations

import json
import math
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envkit.checks.core.text import finite
from envkit.errors import EnvkitError

HISTORY_ENV = "ENVKIT_HISTORY"
BUSY_TIMEOUT_S = 30.0

MIGRATIONS = [
    """
    CREATE TABLE runs (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        uid TEXT NOT NULL UNIQUE,          -- stable across export/import
        started_at TEXT NOT NULL,
        target TEXT NOT NULL,
        state TEXT NOT NULL,               -- passed | failed
        duration_s REAL NOT NULL,
        image_id TEXT,
        gpu_model TEXT,
        gpu_count INTEGER NOT NULL,
        host TEXT,
        environment TEXT NOT NULL,         -- the fingerprint, JSON
        summary TEXT NOT NULL              -- the four counts, JSON
    );
    CREATE TABLE checks (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        check_id TEXT NOT NULL,
        status TEXT NOT NULL,
        duration_s REAL NOT NULL,
        message TEXT NOT NULL,
        PRIMARY KEY (run_id, check_id)
    );
    CREATE TABLE metrics (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        check_id TEXT NOT NULL,
        name TEXT NOT NULL,
        value REAL NOT NULL,
        unit TEXT NOT NULL,
        PRIMARY KEY (run_id, check_id, name)
    );
    CREATE INDEX runs_by_target ON runs(target, id);
    CREATE INDEX metrics_by_name ON metrics(check_id, name);
    """,
]
SCHEMA_VERSION = len(MIGRATIONS)


class HistoryError(EnvkitError):
    """The history file cannot be used; verify goes on without it and says so."""


def default_path() -> Path:
    chosen = os.environ.get(HISTORY_ENV)
    if chosen:
        return Path(chosen).expanduser()
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "envkit" / "history.sqlite3"


@dataclass(frozen=True)
class Run:
    id: int
    uid: str
    started_at: str
    target: str
    state: str
    duration_s: float
    image_id: str | None
    gpu_model: str | None
    gpu_count: int
    host: str | None
    environment: dict[str, Any]
    summary: dict[str, int]


class History:
    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA foreign_keys=ON")
            self._migrate()
        except sqlite3.DatabaseError as exc:
            raise HistoryError(
                f"history file {path} cannot be used: {exc}",
                f"move it away (a new one is made), or point {HISTORY_ENV} elsewhere",
            ) from None
        except OSError as exc:
            raise HistoryError(
                f"cannot open history file {path}: {exc.strerror or exc}",
                f"set {HISTORY_ENV} to a writable path, or pass --no-history",
            ) from None

    def close(self) -> None:
        self.db.close()

    def _migrate(self) -> None:
        version = int(self.db.execute("PRAGMA user_version").fetchone()[0])
        if version > SCHEMA_VERSION:
            raise HistoryError(
                f"history file {self.path} has schema {version}, newer than this envkit's "
                f"{SCHEMA_VERSION}",
                "upgrade envkit, or point ENVKIT_HISTORY at another file",
            )
        for step in range(version, SCHEMA_VERSION):
            with self.transaction():
                # user_version is read again inside the lock: another process may have migrated.
                if int(self.db.execute("PRAGMA user_version").fetchone()[0]) != step:
                    continue
                for statement in MIGRATIONS[step].split(";"):
                    if statement.strip():
                        self.db.execute(statement)
                self.db.execute(f"PRAGMA user_version = {step + 1}")

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self.db
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    def record(self, report: dict[str, Any], uid: str) -> int:
        """One target's report (the runner's TargetReport) as one run; returns its id."""
        return self.record_all([(report, uid)])[0]

    def record_all(self, runs: list[tuple[dict[str, Any], str]]) -> list[int]:
        """Reports as runs in one transaction: all of them, or (on any error) none."""
        with self.transaction() as db:
            return [_insert(db, report, uid) for report, uid in runs]

    def runs(self, target: str | tuple[str, ...] | None = None, limit: int = 20) -> list[Run]:
        targets = (target,) if isinstance(target, str) else tuple(target or ())
        if targets:
            marks = ", ".join("?" for _ in targets)
            rows = self.db.execute(
                f"SELECT * FROM runs WHERE target IN ({marks}) ORDER BY id DESC LIMIT ?",  # noqa: S608 - placeholders only
                (*targets, limit),
            )
        else:
            rows = self.db.execute("SELECT * FROM runs ORDER BY id DESC LIMIT ?", (limit,))
        return [_run(row) for row in rows]

    def run(self, run_id: int) -> Run | None:
        row = self.db.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
        return _run(row) if row else None

    def checks(self, run_id: int) -> dict[str, str]:
        rows = self.db.execute("SELECT check_id, status FROM checks WHERE run_id = ?", (run_id,))
        return dict(rows.fetchall())

    def metrics(self, run_id: int) -> dict[tuple[str, str], tuple[float, str]]:
        rows = self.db.execute(
            "SELECT check_id, name, value, unit FROM metrics WHERE run_id = ?", (run_id,)
        )
        return {(c, n): (v, u) for c, n, v, u in rows.fetchall()}

    def figures(
        self, target: str, check_id: str, name: str, before: int, limit: int
    ) -> list[float]:
        """The metric in this target's last `limit` passing runs before run `before`, on the
        same image and GPU model as that run."""
        rows = self.db.execute(
            "SELECT m.value FROM metrics m JOIN runs r ON r.id = m.run_id"
            " JOIN checks c ON c.run_id = m.run_id AND c.check_id = m.check_id"
            " JOIN runs now ON now.id = ?"
            " WHERE r.target = ? AND m.check_id = ? AND m.name = ? AND r.id < ?"
            " AND c.status = 'pass'"
            " AND r.image_id IS now.image_id AND r.gpu_model IS now.gpu_model"
            " ORDER BY r.id DESC LIMIT ?",
            (before, target, check_id, name, before, limit),
        )
        return [float(value) for (value,) in rows.fetchall()]


def _gpu_model(gpus: list[Any]) -> str | None:
    names = sorted({str(g.get("name")) for g in gpus if isinstance(g, dict)})
    return ", ".join(names) or None


def _run(row: tuple[Any, ...]) -> Run:
    return Run(
        id=row[0],
        uid=row[1],
        started_at=row[2],
        target=row[3],
        state=row[4],
        duration_s=row[5],
        image_id=row[6],
        gpu_model=row[7],
        gpu_count=row[8],
        host=row[9],
        environment=json.loads(row[10]),
        summary=json.loads(row[11]),
    )


def _insert(db: sqlite3.Connection, report: dict[str, Any], uid: str) -> int:
    """One run's rows. Figures that are not finite numbers are not kept: a baseline or a chart
    cannot use them, and JSON (export, --json) cannot carry them."""
    env = report.get("environment") or {}
    gpus = env.get("gpus") or []
    counts = report["summary"]
    state = "failed" if counts.get("fail") or counts.get("error") else "passed"
    cursor = db.execute(
        "INSERT INTO runs (uid, started_at, target, state, duration_s, image_id,"
        " gpu_model, gpu_count, host, environment, summary)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            uid,
            report["started_at"],
            report["target"],
            state,
            float(report["duration_s"]),
            env.get("image_id"),
            _gpu_model(gpus),
            len(gpus),
            env.get("hostname"),
            json.dumps(finite(env), sort_keys=True),
            json.dumps(counts, sort_keys=True),
        ),
    )
    run_id = int(cursor.lastrowid or 0)
    for check in report["checks"]:
        db.execute(
            "INSERT OR REPLACE INTO checks VALUES (?, ?, ?, ?, ?)",
            (run_id, check["id"], check["status"], check["duration_s"], check["message"]),
        )
        for metric in check["metrics"]:
            value = metric.get("value")
            if isinstance(value, bool) or not isinstance(value, int | float):
                continue
            if not math.isfinite(value):
                continue
            db.execute(
                "INSERT OR REPLACE INTO metrics VALUES (?, ?, ?, ?, ?)",
                (run_id, check["id"], metric["name"], float(value), metric["unit"]),
            )
    return run_id


def export_lines(history: History) -> list[str]:
    """Every run as one JSON line (checks and figures inside), oldest first."""
    lines = []
    for run in reversed(history.runs(limit=10**9)):
        checks = history.db.execute(
            "SELECT check_id, status, duration_s, message FROM checks WHERE run_id = ?", (run.id,)
        ).fetchall()
        metrics = history.metrics(run.id)
        row = {k: v for k, v in run.__dict__.items() if k != "id"}
        row["checks"] = [
            {
                "id": c,
                "status": s,
                "duration_s": d,
                "message": m,
                "metrics": [
                    {"name": n, "value": v, "unit": u}
                    for (check, n), (v, u) in sorted(metrics.items())
                    if check == c
                ],
            }
            for c, s, d, m in checks
        ]
        lines.append(json.dumps(row, sort_keys=True))
    return lines


def open_history(path: Path | None) -> History:
    """The history at PATH, else $ENVKIT_HISTORY, else the default place."""
    return History(path or default_path())
