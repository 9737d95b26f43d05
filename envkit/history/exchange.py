"""History shared between machines: `envkit history export` writes every run as one JSON line,
`envkit history import` merges such a file. An import is data from elsewhere: the file is read
bounded (a regular file, size-capped), every line is checked against the record's schema before
anything is written, and the runs go in one transaction: all of them or, on the first bad line,
none, with that line and field named."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from envkit.errors import EnvkitError
from envkit.files import read_utf8, write_atomically
from envkit.history.store import History, HistoryError, Run
from envkit.verify.reports import ReportShapeError, checked_report, checked_text, strict_json

IMPORT_LIMIT = 512 * 1024 * 1024


def record_of(row: Any) -> tuple[dict[str, Any], str]:
    """(the report to record, its uid) from one exported line's object, checked as every report
    entering envkit is (verify/reports.py); ReportShapeError naming the field otherwise."""
    if not isinstance(row, dict):
        raise ReportShapeError("the line: expected an object")
    report: dict[str, Any] = dict(checked_report(row))
    image = row.get("image_id")
    image_id = None if image is None else checked_text(image, "image_id", 200)
    report["environment"] = {**report["environment"], "image_id": image_id}
    uid = checked_text(row.get("uid"), "uid", 200)
    if not uid:
        raise ReportShapeError("uid: empty")
    _encodable(report, "the line")
    return report, uid


def _encodable(value: Any, where: str) -> None:
    """Every string is real text: JSON can spell lone surrogates, SQLite cannot store them."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise ReportShapeError(
                f"{where}: text with a lone surrogate (not Unicode text)"
            ) from None
    elif isinstance(value, dict):
        for key, item in value.items():
            _encodable(key, where)
            _encodable(item, f"{where}.{key}")
    elif isinstance(value, list):
        for item in value:
            _encodable(item, where)


def read_records(source: Path) -> list[tuple[dict[str, Any], str]]:
    """Every run in an export file, checked; EnvkitError naming the first bad line and field."""
    text, bad_line = read_utf8(source, IMPORT_LIMIT, "history export")
    if text is None:
        raise _refused(source, bad_line or 0, "not UTF-8")
    records = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            records.append(record_of(strict_json(line)))
        except RecursionError:
            raise _refused(source, number, "nested too deeply") from None
        except ReportShapeError as exc:
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
    checks = history.check_rows(run.id)
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
            if (run := history.run(run_id)) is not None:
                lines.append(_export_line(history, run))
        except HistoryError as exc:
            history.skipped.append(f"run {run_id}: {exc.message}")
    return lines
