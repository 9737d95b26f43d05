"""A directory of the user's own pytest checks, run inside the target when pytest is there."""

from __future__ import annotations

import subprocess
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from .contract import CheckResult, check_result


def _row(check_id: str, status: str, duration: float, message: str) -> CheckResult:
    return check_result(check_id, status, round(duration, 4), message, [])


def run_user_checks(python: str, directory: str, timeout: float) -> list[CheckResult]:
    if not Path(directory).is_dir():
        return [_row("user.checks_dir", "error", 0.0, f"{directory} is not a directory here")]
    probe = subprocess.run([python, "-c", "import pytest"], capture_output=True, check=False)
    if probe.returncode != 0:
        return [_row("user.checks_dir", "skip", 0.0, "pytest is not installed in this environment")]
    with tempfile.TemporaryDirectory() as tmp:
        junit = Path(tmp) / "junit.xml"
        started = time.perf_counter()
        try:
            # rootdir pinned to the checks' folder: ids stay "user.<module>.<test>" wherever it is.
            subprocess.run(
                [
                    python,
                    "-m",
                    "pytest",
                    "-q",
                    "-p",
                    "no:cacheprovider",
                    f"--rootdir={directory}",
                    directory,
                    f"--junitxml={junit}",
                ],
                capture_output=True,
                timeout=timeout,
                check=False,
                cwd=directory,
            )
        except subprocess.TimeoutExpired:
            return [
                _row(
                    "user.checks_dir",
                    "error",
                    time.perf_counter() - started,
                    f"your checks in {directory} ran past {timeout:.0f} s",
                )
            ]
        if not junit.is_file():
            return [
                _row(
                    "user.checks_dir",
                    "error",
                    time.perf_counter() - started,
                    "pytest wrote no report (a collection error?)",
                )
            ]
        return _parse(junit)


def _parse(junit: Path) -> list[CheckResult]:
    rows: list[CheckResult] = []
    # The XML is the report our own pytest run just wrote into a private temp dir.
    for case in ET.parse(junit).getroot().iter("testcase"):  # noqa: S314
        name = f"user.{case.get('classname', '')}.{case.get('name', '')}".replace("..", ".")
        duration = float(case.get("time", 0) or 0)
        failure = case.find("failure")
        if failure is None:
            failure = case.find("error")
        skipped = case.find("skipped")
        if failure is not None:
            rows.append(
                _row(
                    name,
                    "fail" if failure.tag == "failure" else "error",
                    duration,
                    (failure.get("message") or "")[:500],
                )
            )
        elif skipped is not None:
            rows.append(_row(name, "skip", duration, skipped.get("message") or ""))
        else:
            rows.append(_row(name, "pass", duration, ""))
    return rows
