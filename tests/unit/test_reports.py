"""Reports: JUnit XML that CI parsers read, the combined JSON, exit codes CI can trust, and an
HTML page that shows every value a report carries as text."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from typing import Any

from envkit.report.html import to_html
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


HOSTILE = "<script>alert('x\"y')</script> & \x07"


class _Page(HTMLParser):
    """Every tag, every text and every attribute value of a page, as a browser reads them."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.texts: list[str] = []
        self.attributes: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attributes += [value or "" for _, value in attrs]

    def handle_data(self, data: str) -> None:
        self.texts.append(data)


def test_html_shows_every_hostile_value_as_text_never_as_markup() -> None:
    """Markup, quotes and a control character from a target reach the page as text (the control
    character shown as an escape, which an XML or HTML page can carry), in text and in
    attributes alike, wherever the template puts them."""
    report = _report("fail")
    report["target"] = f"ssh://{HOSTILE}"
    check = report["checks"][0]
    check.update(id=f"tensor.{HOSTILE}", status=HOSTILE, message=HOSTILE)
    check["metrics"][0].update(name=HOSTILE, unit=HOSTILE)
    report["environment"] = {"torch": HOSTILE, "gpus": [{"name": HOSTILE}]}
    history = ({HOSTILE: [HOSTILE, HOSTILE]}, {HOSTILE: [(1, 1.0), (2, 2.0)]})
    page = to_html(combine([report], {HOSTILE: HOSTILE}), history)
    assert "<script" not in page and "\x07" not in page
    parsed = _Page()
    parsed.feed(page)
    assert "script" not in parsed.tags
    shown = HOSTILE.replace("\x07", "\\x07")
    text = "".join(parsed.texts)
    assert text.count(shown) >= 20, "target, check, status, message, figures, history: as text"
    assert shown in parsed.attributes, "the matrix cell's tooltip"
    assert f"{shown} = 2 {shown} (50% of 4)" in text
