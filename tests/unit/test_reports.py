"""Reports: JUnit XML that CI parsers read, the combined JSON, and exit codes CI can trust."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

from envkit.report.junit import to_junit
from envkit.verify.combine import combine, exit_code


def _report(*statuses: str) -> Any:  # a TargetReport as the runner writes it
    checks = [
        {
            "id": f"tensor.c{i}",
            "group": "tensor",
            "status": s,
            "duration_s": 0.5,
            "message": f"{s} message",
            "metrics": [
                {
                    "name": "m",
                    "value": 2.0,
                    "unit": "GB/s",
                    "peak": 4.0,
                    "fraction_of_peak": 0.5,
                    "threshold": None,
                }
            ],
        }
        for i, s in enumerate(statuses)
    ]
    counts = {k: statuses.count(k) for k in ("pass", "fail", "skip", "error")}
    return {"target": "docker://x", "environment": {}, "summary": counts, "checks": checks}


def test_junit_counts_and_elements() -> None:
    xml = to_junit(combine([_report("pass", "fail", "skip", "error")], {}))
    suite = ET.fromstring(xml).find("testsuite")
    assert suite is not None
    assert (
        suite.get("tests"),
        suite.get("failures"),
        suite.get("errors"),
        suite.get("skipped"),
    ) == ("4", "1", "1", "1")
    cases = suite.findall("testcase")
    assert cases[1].find("failure") is not None and cases[3].find("error") is not None
    assert cases[2].find("skipped") is not None
    out = cases[0].find("system-out")
    assert out is not None and "50.0% of peak" in (out.text or "")


def test_unreachable_targets_are_reported_and_exit_3() -> None:
    combined = combine([_report("pass")], {"docker://gone": "no container named gone"})
    assert combined["summary"]["unreachable"] == 1 and combined["summary"]["targets"] == 2
    assert exit_code(combined) == 3
    root = ET.fromstring(to_junit(combined))
    assert any(s.get("name") == "docker://gone" for s in root.iter("testsuite"))


def test_exit_codes() -> None:
    assert exit_code(combine([_report("pass", "skip")], {})) == 0
    assert exit_code(combine([_report("pass", "fail")], {})) == 1
    assert exit_code(combine([_report("error")], {})) == 1
