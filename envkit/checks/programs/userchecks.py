"""A directory of the user's own pytest checks, run inside the target when pytest is there."""

from __future__ import annotations

import subprocess
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from ..core.contract import CheckResult, Status, check_result
from ..core.text import readable_xml


def _row(check_id: str, status: Status, duration: float, message: str) -> CheckResult:
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
            argv = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
            argv += [f"--rootdir={directory}", directory, f"--junitxml={junit}"]
            subprocess.run(argv, capture_output=True, timeout=timeout, check=False, cwd=directory)
        except subprocess.TimeoutExpired:
            problem = f"your checks in {directory} ran past {timeout:.0f} s"
        else:
            if junit.is_file():
                return _parse(junit)
            problem = "pytest wrote no report (a collection error?)"
        return [_row("user.checks_dir", "error", time.perf_counter() - started, problem)]


MAX_REPORT_BYTES = 64 << 20
# A test case's outcome elements and their statuses, the first found deciding.
OUTCOMES: dict[str, Status] = {"failure": "fail", "error": "error", "skipped": "skip"}


def _parse(junit: Path) -> list[CheckResult]:
    """Each test case as a check result. pytest's JUnit file carries whatever the tests and
    pytest wrote (some pytest versions put ANSI colour into skip reasons, which XML 1.0 cannot
    carry): the characters XML forbids are made visible first, and a file that still cannot be
    read is one error result, never a crash that costs the target's other results."""
    try:
        raw = junit.read_bytes()[:MAX_REPORT_BYTES].decode("utf-8", "replace")
        # The XML is the report our own pytest run just wrote into a private temp dir.
        root = ET.fromstring(readable_xml(raw))  # noqa: S314
    except (OSError, ET.ParseError) as exc:
        return [_row("user.checks_dir", "error", 0.0, f"pytest's report could not be read: {exc}")]
    return [_case(case) for case in root.iter("testcase")]


def _case(case: ET.Element) -> CheckResult:
    name = f"user.{case.get('classname', '')}.{case.get('name', '')}".replace("..", ".")
    try:
        duration = float(case.get("time", 0) or 0)
    except ValueError:
        duration = 0.0
    for tag, status in OUTCOMES.items():
        if (found := case.find(tag)) is not None:
            return _row(name, status, duration, (found.get("message") or "")[:500])
    return _row(name, "pass", duration, "")
