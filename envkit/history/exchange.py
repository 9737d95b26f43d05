"""History shared between machines: `envkit history export` writes every run as one JSON line,
`envkit history import` merges such a file. An import is data from elsewhere: the file is read
bounded (a regular file, size-capped), every line is checked against the record's schema before
anything is written, and the runs go in one transaction: all of them or, on the first bad line,
none, with that line and field named."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from envkit.checks.core.contract import STATUSES
from envkit.errors import EnvkitError, FieldError
from envkit.files import decode_utf8, read_regular, write_atomically
from envkit.history.store import History, HistoryError, Run

IMPORT_LIMIT = 512 * 1024 * 1024
LIMITS = {"uid": 200, "started_at": 64, "target": 2000, "image_id": 200, "id": 200}
MAX_MESSAGE = 1 << 20
MAX_FIGURE = 1e300


class RecordError(ValueError):
    def __init__(self, where: str, problem: str) -> None:
        super().__init__(f"{where}: {problem}")


def _text(value: Any, where: str, limit: int) -> str:
    if not isinstance(value, str):
        raise RecordError(where, f"expected text, found {type(value).__name__}")
    if len(value) > limit:
        raise RecordError(where, f"{len(value)} characters, over {limit}")
    return value


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise RecordError(where, f"expected a number, found {type(value).__name__}")
    try:
        number = float(value)
    except OverflowError:
        raise RecordError(where, "a number too large to store") from None
    if not math.isfinite(number) or abs(number) > MAX_FIGURE:
        raise RecordError(where, f"{value!r} is not a finite figure")
    return number


def _count(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**53:
        raise RecordError(where, f"expected a count, found {value!r}")
    return value


def _items(value: Any, where: str, kind: type) -> Any:
    if not isinstance(value, kind):
        raise RecordError(where, f"expected {'a list' if kind is list else 'an object'}")
    return value


def _check(value: Any, where: str) -> dict[str, Any]:
    row = _items(value, where, dict)
    status = row.get("status")
    if status not in STATUSES:
        raise RecordError(f"{where}.status", f"{status!r} is not one of {', '.join(STATUSES)}")
    metrics = []
    for n, metric in enumerate(_items(row.get("metrics", []), f"{where}.metrics", list)):
        at = f"{where}.metrics[{n}]"
        item = _items(metric, at, dict)
        metrics.append(
            {
                "name": _text(item.get("name"), f"{at}.name", 200),
                "value": _number(item.get("value"), f"{at}.value"),
                "unit": _text(item.get("unit"), f"{at}.unit", 50),
            }
        )
    return {
        "id": _text(row.get("id"), f"{where}.id", LIMITS["id"]),
        "status": status,
        "duration_s": _number(row.get("duration_s"), f"{where}.duration_s"),
        "message": _text(row.get("message", ""), f"{where}.message", MAX_MESSAGE),
        "metrics": metrics,
    }


def record_of(row: Any) -> tuple[dict[str, Any], str]:
    """(the report to record, its uid) from one exported line's object; RecordError naming the
    field otherwise."""
    row = _items(row, "the line", dict)
    environment = dict(_items(row.get("environment"), "environment", dict))
    image = row.get("image_id")
    environment["image_id"] = None if image is None else _text(image, "image_id", 200)
    summary = _items(row.get("summary"), "summary", dict)
    checks = _items(row.get("checks"), "checks", list)
    report = {
        "started_at": _text(row.get("started_at"), "started_at", LIMITS["started_at"]),
        "target": _text(row.get("target"), "target", LIMITS["target"]),
        "duration_s": _number(row.get("duration_s"), "duration_s"),
        "environment": environment,
        "summary": {k: _count(summary.get(k, 0), f"summary.{k}") for k in STATUSES},
        "checks": [_check(c, f"checks[{n}]") for n, c in enumerate(checks)],
    }
    uid = _text(row.get("uid"), "uid", LIMITS["uid"])
    if not uid:
        raise RecordError("uid", "empty")
    _encodable(report, "the line")
    return report, uid


def _encodable(value: Any, where: str) -> None:
    """Every string is real text: JSON can spell lone surrogates, SQLite cannot store them."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise RecordError(where, "text with a lone surrogate (not Unicode text)") from None
    elif isinstance(value, dict):
        for key, item in value.items():
            _encodable(key, where)
            _encodable(item, f"{where}.{key}")
    elif isinstance(value, list):
        for item in value:
            _encodable(item, where)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def read_records(source: Path) -> list[tuple[dict[str, Any], str]]:
    """Every run in an export file, checked; EnvkitError naming the first bad line and field."""
    try:
        data = read_regular(source, IMPORT_LIMIT, "history export")
    except FieldError as exc:
        raise EnvkitError(exc.problem, exc.fix) from None
    text, bad_line = decode_utf8(data)
    if text is None:
        raise _refused(source, bad_line or 0, "not UTF-8")
    records = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            records.append(record_of(json.loads(line, parse_constant=_reject_constant)))
        except RecursionError:
            raise _refused(source, number, "nested too deeply") from None
        except RecordError as exc:
            raise _refused(source, number, str(exc)) from None
        except ValueError as exc:
            raise _refused(source, number, f"not JSON ({exc})") from None
    return records


def _refused(source: Path, line: int, problem: str) -> EnvkitError:
    return EnvkitError(
        f"{source}:{line}: {problem}; nothing was imported",
        "import a file written by `envkit history export`",
    )


def import_runs(history: History, source: Path) -> tuple[int, int]:
    """(added, already here) after one transaction of every new run in `source`."""
    records = read_records(source)
    known = {uid for (uid,) in history._read("SELECT uid FROM runs")}
    fresh: dict[str, tuple[dict[str, Any], str]] = {}
    for report, uid in records:
        if uid not in known:
            fresh.setdefault(uid, (report, uid))
    history.record_all(list(fresh.values()))
    return len(fresh), len(records) - len(fresh)


def write_export(history: History, out: Path) -> int:
    """Every run into `out`, whole or not at all (a temporary file renamed into place)."""
    lines = export_lines(history)
    try:
        write_atomically(out, "".join(line + "\n" for line in lines))
    except OSError as exc:
        raise HistoryError(
            f"cannot write {out}: {exc.strerror or type(exc).__name__}",
            "name a file in a folder you can write, with room on its disk",
        ) from None
    return len(lines)


def _export_ids(history: History) -> list[int]:
    """Every run id, oldest first. Where the runs table's pages are damaged, the ids are
    probed one by one up to the highest ever handed out, so what can be read is saved."""
    try:
        return [
            i for (i,) in history._read("SELECT id FROM runs ORDER BY id") if isinstance(i, int)
        ]
    except HistoryError:
        try:
            rows = history._read("SELECT seq FROM sqlite_sequence WHERE name = 'runs'")
        except HistoryError:
            rows = []
        highest = rows[0][0] if rows and isinstance(rows[0][0], int) else 10_000
        return list(range(1, min(highest, 10**6) + 1))


def _export_line(history: History, run: Run) -> str:
    checks = [
        (c, s, d, m)
        for c, s, d, m in history._read(
            "SELECT check_id, status, duration_s, message FROM checks WHERE run_id = ?",
            (run.id,),
        )
        if isinstance(c, str) and isinstance(s, str) and isinstance(m, str)
    ]
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
    return json.dumps(row, sort_keys=True)


def export_lines(history: History) -> list[str]:
    """Every run as one JSON line (checks and figures inside), oldest first. A run that
    cannot be read (a damaged page, a field envkit did not write) is left out and named in
    `history.skipped`: export is how what is still readable is saved from a damaged store."""
    lines = []
    for run_id in _export_ids(history):
        try:
            run = history.run(run_id)
            if run is not None:
                lines.append(_export_line(history, run))
        except HistoryError as exc:
            history.skipped.append(f"run {run_id}: {exc.message}")
    return lines
