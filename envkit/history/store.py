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
from dataclasses import dataclass, fields
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
        peak REAL,                         -- the published peak it was measured against
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
    if chosen := os.environ.get(HISTORY_ENV):
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


RUN_COLUMNS = tuple(f.name for f in fields(Run))
# The columns every reader needs, by table: a store without them (a table dropped, a column
# renamed by hand) is refused at open, with what is missing named.
COLUMNS = {
    "runs": RUN_COLUMNS,
    "checks": ("run_id", "check_id", "status", "duration_s", "message"),
    "metrics": ("run_id", "check_id", "name", "value", "unit", "peak"),
}
RECOVER = (
    "keep a copy of it; `envkit history export --history-file FILE OUT` saves what is still "
    f"readable; then move the file away (a fresh one is made) or point {HISTORY_ENV} elsewhere"
)


class History:
    def __init__(self, path: Path, read_only: bool = False) -> None:
        self.path = path
        self.skipped: list[str] = []  # rows read around, with why: said as one warning
        try:
            if not read_only:
                path.parent.mkdir(parents=True, exist_ok=True)
            self.db = _connect(path, read_only)
            if not read_only:
                self._migrate()
            self._check_schema()
        except sqlite3.DatabaseError as exc:
            fix = RECOVER
            if "readonly" in str(exc) or "unable to open" in str(exc):
                fix = f"point {HISTORY_ENV} (or --history-file) at a file this user may write"
            raise HistoryError(f"history file {path} cannot be used: {exc}", fix) from None
        except OSError as exc:
            raise HistoryError(
                f"cannot open history file {path}: {exc.strerror or exc}",
                f"set {HISTORY_ENV} to a path this user may write, or pass --no-history",
            ) from None

    def _check_schema(self) -> None:
        missing = []
        for table, columns in COLUMNS.items():
            found = {row[1] for row in self.db.execute(f"PRAGMA table_info({table})")}
            missing += [f"{table}.{c}" for c in columns if c not in found]
        if missing:
            raise HistoryError(
                f"history file {self.path} lacks {', '.join(missing[:6])}: not a store envkit "
                "wrote, or edited by hand",
                RECOVER,
            )

    def read_around(self) -> str:
        """The runs read around (`skipped`) as one line: the first three, with why."""
        more = f"; +{len(self.skipped) - 3} more" if len(self.skipped) > 3 else ""
        return f"read around {'; '.join(self.skipped[:3])}{more}"

    def _read(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """A query's rows; a damaged file (a corrupt page, a broken index) is a HistoryError
        naming the file and what SQLite found, never a traceback."""
        try:
            return self.db.execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise HistoryError(f"history file {self.path} is damaged: {exc}", RECOVER) from None

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
            if self.db.in_transaction:  # SQLite may have rolled back itself (a full disk)
                self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    def record(self, report: dict[str, Any], uid: str) -> int:
        """One target's report (the runner's TargetReport) as one run; returns its id."""
        return self.record_all([(report, uid)])[0]

    def record_all(self, runs: list[tuple[dict[str, Any], str]]) -> list[int]:
        """Reports as runs in one transaction: all of them, or (on any error) none."""
        try:
            with self.transaction() as db:
                return [_insert(db, report, uid) for report, uid in runs]
        except sqlite3.Error as exc:
            raise HistoryError(
                f"history file {self.path} could not take the run(s): {exc}; nothing was recorded",
                RECOVER
                if not isinstance(exc, sqlite3.OperationalError)
                else f"a read-only or full disk? point {HISTORY_ENV} at a writable file",
            ) from None

    def runs(self, target: str | tuple[str, ...] | None = None, limit: int = 20) -> list[Run]:
        targets = (target,) if isinstance(target, str) else tuple(target or ())
        where = f"WHERE target IN ({', '.join('?' for _ in targets)})" if targets else ""
        rows = self._read(
            f"SELECT {', '.join(RUN_COLUMNS)} FROM runs {where} ORDER BY id DESC LIMIT ?",  # noqa: S608 - names and placeholders only
            (*targets, limit),
        )
        return [run for run in map(self._run, rows) if run is not None]

    def run(self, run_id: int) -> Run | None:
        columns = ", ".join(RUN_COLUMNS)
        rows = self._read(f"SELECT {columns} FROM runs WHERE id = ?", (run_id,))  # noqa: S608
        return self._run(rows[0]) if rows else None

    def _run(self, row: tuple[Any, ...]) -> Run | None:
        """A row as a Run, or None (its why kept in `skipped`) where it is not one envkit
        wrote: text where a figure belongs, unreadable JSON, JSON of the wrong shape."""
        try:
            return _run(row)
        except (ValueError, TypeError, RecursionError) as exc:
            self.skipped.append(f"run {row[0]!r}: {exc}")
            return None

    def checks(self, run_id: int) -> dict[str, str]:
        rows = self._read("SELECT check_id, status FROM checks WHERE run_id = ?", (run_id,))
        return {c: s for c, s in rows if isinstance(c, str) and isinstance(s, str)}

    def metrics(self, run_id: int) -> dict[tuple[str, str], tuple[float, str]]:
        """The run's figures: numbers only (a hand-edited text, NULL or blob is left out)."""
        rows = self._read(
            "SELECT check_id, name, value, unit FROM metrics WHERE run_id = ?"
            " AND typeof(value) IN ('real', 'integer')",
            (run_id,),
        )
        return {
            (c, n): (float(v), u)
            for c, n, v, u in rows
            if all(isinstance(text, str) for text in (c, n, u)) and math.isfinite(float(v))
        }

    def peaks(self, run_id: int) -> dict[tuple[str, str], float]:
        """The published peaks the run's figures were measured against, where there was one."""
        rows = self._read(
            "SELECT check_id, name, peak FROM metrics WHERE run_id = ?"
            " AND typeof(peak) IN ('real', 'integer')",
            (run_id,),
        )
        return {
            (c, n): float(p)
            for c, n, p in rows
            if isinstance(c, str) and isinstance(n, str) and math.isfinite(float(p)) and p > 0
        }

    def latest_per_target(self, limit: int = 200) -> list[Run]:
        """Each target's most recent run, newest first, at most LIMIT targets."""
        columns = ", ".join(f"r.{c}" for c in RUN_COLUMNS)
        rows = self._read(
            f"SELECT {columns} FROM runs r JOIN (SELECT target, MAX(id) AS last FROM runs"  # noqa: S608 - names only
            " GROUP BY target) l ON r.id = l.last ORDER BY r.id DESC LIMIT ?",
            (limit,),
        )
        return [run for run in map(self._run, rows) if run is not None]

    def check_rows(self, run_id: int) -> list[tuple[str, str, float, str]]:
        """The run's checks as (id, status, duration in seconds, message)."""
        rows = self._read(
            "SELECT check_id, status, duration_s, message FROM checks WHERE run_id = ?"
            " ORDER BY check_id",
            (run_id,),
        )
        return [
            (c, s, float(d), m)
            for c, s, d, m in rows
            if isinstance(c, str)
            and isinstance(s, str)
            and isinstance(d, int | float)
            and isinstance(m, str)
        ]

    def figures(
        self, target: str, check_id: str, name: str, before: int, limit: int
    ) -> list[float]:
        """The metric in this target's last `limit` passing runs before run `before`, on the
        same image and GPU model as that run."""
        rows = self._read(
            "SELECT m.value FROM metrics m JOIN runs r ON r.id = m.run_id"
            " JOIN checks c ON c.run_id = m.run_id AND c.check_id = m.check_id"
            " JOIN runs now ON now.id = ?"
            " WHERE r.target = ? AND m.check_id = ? AND m.name = ? AND r.id < ?"
            " AND c.status = 'pass'"
            " AND r.image_id IS now.image_id AND r.gpu_model IS now.gpu_model"
            " AND typeof(m.value) IN ('real', 'integer')"
            " ORDER BY r.id DESC LIMIT ?",
            (before, target, check_id, name, before, limit),
        )
        return [float(value) for (value,) in rows if math.isfinite(float(value))]


def _object(text: Any, what: str) -> dict[str, Any]:
    found = json.loads(text) if isinstance(text, str) else None
    if not isinstance(found, dict):
        raise TypeError(f"{what} is not a JSON object")
    return found


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{what} is not text")
    return value


def _run(row: tuple[Any, ...]) -> Run:
    """A runs row (RUN_COLUMNS order) as a Run; ValueError or TypeError where a field is not
    what envkit wrote there."""
    summary = _object(row[11], "summary")
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in summary.values()):
        raise TypeError("summary counts are not whole numbers")
    duration = row[5]
    if isinstance(duration, bool) or not isinstance(duration, int | float):
        raise TypeError("duration_s is not a number")
    return Run(
        id=int(row[0]),
        uid=_text(row[1], "uid"),
        started_at=_text(row[2], "started_at"),
        target=_text(row[3], "target"),
        state=_text(row[4], "state"),
        duration_s=float(duration),
        image_id=row[6] if isinstance(row[6], str) else None,
        gpu_model=row[7] if isinstance(row[7], str) else None,
        gpu_count=row[8] if isinstance(row[8], int) else 0,
        host=row[9] if isinstance(row[9], str) else None,
        environment=_object(row[10], "environment"),
        summary=summary,
    )


def _number(value: Any, positive: bool = False) -> float | None:
    """A finite number (POSITIVE: above 0, as a published peak is), else None."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value) if value > 0 or not positive else None


def _insert(db: sqlite3.Connection, report: dict[str, Any], uid: str) -> int:
    """One run's rows. Figures that are not finite numbers are not kept: a baseline or a chart
    cannot use them, and JSON (export, --json) cannot carry them."""
    env = report.get("environment") or {}
    gpus = env.get("gpus") or []
    models = sorted({str(g.get("name")) for g in gpus if isinstance(g, dict)})
    counts = report["summary"]
    cursor = db.execute(
        "INSERT INTO runs (uid, started_at, target, state, duration_s, image_id,"
        " gpu_model, gpu_count, host, environment, summary)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            uid,
            report["started_at"],
            report["target"],
            "failed" if counts.get("fail") or counts.get("error") else "passed",
            float(report["duration_s"]),
            env.get("image_id"),
            ", ".join(models) or None,
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
            value = _number(metric.get("value"))
            if value is None:
                continue
            peak = _number(metric.get("peak"), positive=True)
            db.execute(
                "INSERT OR REPLACE INTO metrics (run_id, check_id, name, value, unit, peak)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (run_id, check["id"], metric["name"], value, metric["unit"], peak),
            )
    return run_id


def open_history(path: Path | None, read_only: bool = False) -> History:
    """The history at PATH, else $ENVKIT_HISTORY, else the default place. READ_ONLY: a file
    this user may read but not write (a shared one) is read as it is, never migrated."""
    path = path or default_path()
    if not read_only and path.is_file():
        # A shared file this user may read but not write: read as it is.
        read_only = not (os.access(path, os.W_OK) and os.access(path.parent, os.W_OK))
    return History(path, read_only)


def _connect(path: Path, read_only: bool) -> sqlite3.Connection:
    if read_only:
        if not path.is_file():
            raise OSError(2, "no such file")
        uri = path.resolve().as_uri()
        db = sqlite3.connect(
            f"{uri}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_S, isolation_level=None
        )
        try:
            db.execute("PRAGMA schema_version").fetchone()
        except sqlite3.OperationalError:
            # A WAL store in a folder this user may not write: SQLite cannot make the
            # shared-memory file a reader needs. With no write-ahead log left over (envkit
            # checkpoints on close) the file alone is the whole store: read it as immutable.
            wal = path.with_name(path.name + "-wal")
            if wal.exists() and wal.stat().st_size:
                raise
            db.close()
            db = sqlite3.connect(
                f"{uri}?immutable=1", uri=True, timeout=BUSY_TIMEOUT_S, isolation_level=None
            )
        db.execute("PRAGMA query_only=ON")
        return db
    db = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA foreign_keys=ON")
    return db
