"""JUnit XML: one testsuite per target and group, one testcase per check; CI systems read it."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING

from envkit.checks.core.text import for_xml

if TYPE_CHECKING:
    from envkit.checks.core.contract import CheckResult
    from envkit.verify.combine import CombinedReport


def _metrics_text(check: CheckResult) -> str:
    lines = []
    for metric in check.get("metrics", []):
        fraction = metric.get("fraction_of_peak")
        share = f" ({fraction:.1%} of peak {metric['peak']})" if fraction is not None else ""
        lines.append(f"{metric['name']} = {metric['value']:.6g} {metric['unit']}{share}")
    return "\n".join(lines)


def _clean(element: ET.Element) -> None:
    """Every attribute and text made carriable by XML 1.0 (checks/core/text.py): a control
    character from a target would otherwise make the whole file ill-formed for CI."""
    for node in element.iter():
        for key, value in node.attrib.items():
            node.set(key, for_xml(value))
        if node.text is not None:
            node.text = for_xml(node.text)


def to_junit(combined: CombinedReport) -> str:
    root = ET.Element("testsuites", name="envkit verify")
    for report in combined["targets"]:
        groups: dict[str, list[CheckResult]] = {}
        for check in report["checks"]:
            groups.setdefault(check["group"], []).append(check)
        for group, checks in groups.items():
            suite = ET.SubElement(
                root,
                "testsuite",
                name=f"{report['target']} {group}",
                tests=str(len(checks)),
                failures=str(sum(c["status"] == "fail" for c in checks)),
                errors=str(sum(c["status"] == "error" for c in checks)),
                skipped=str(sum(c["status"] == "skip" for c in checks)),
                time=f"{sum(c['duration_s'] for c in checks):.3f}",
            )
            for check in checks:
                case = ET.SubElement(
                    suite,
                    "testcase",
                    classname=f"{report['target']}.{group}",
                    name=check["id"],
                    time=f"{check['duration_s']:.3f}",
                )
                status, message = check["status"], check["message"]
                if status in ("fail", "error"):
                    tag = "failure" if status == "fail" else "error"
                    ET.SubElement(
                        case, tag, message=message.splitlines()[0] if message else status
                    ).text = message
                elif status == "skip":
                    ET.SubElement(case, "skipped", message=message)
                out = "\n".join(
                    filter(None, [message if status == "pass" else "", _metrics_text(check)])
                )
                if out:
                    ET.SubElement(case, "system-out").text = out
    for item in combined.get("unreachable", []):
        suite = ET.SubElement(root, "testsuite", name=f"{item['target']}", tests="1", errors="1")
        case = ET.SubElement(suite, "testcase", classname=item["target"], name="reachable")
        ET.SubElement(case, "error", message="target unreachable").text = item["message"]
    _clean(root)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
