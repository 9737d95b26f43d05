"""The HTML report: one self-contained page (inline CSS and SVG, no script, nothing fetched) with
the summary, a target x check matrix, a table per target, and charts of measured vs published
peak figures and of check durations. Every value from a report is escaped.

Here the page's data is made: the numbers, each chart's geometry, the order of the rows;
templates/report/report.html.j2 lays it out, loaded as envkit's other templates are."""

from __future__ import annotations

from collections import defaultdict
from html import escape as _html_escape
from typing import TYPE_CHECKING

import jinja2
from markupsafe import Markup

from envkit.checks.core.text import for_xml
from envkit.render.files import template_loader
from envkit.render.template_cache import template_cache
from envkit.report import check_order

if TYPE_CHECKING:
    from envkit.checks.core.contract import CheckResult, TargetReport
    from envkit.verify.combine import CombinedReport

TEMPLATE = "report/report.html.j2"
COLOURS = {
    "pass": "#1a7f37",
    "fail": "#cf222e",
    "error": "#8250df",
    "skip": "#9a6700",
    "unreachable": "#cf222e",
    "passed": "#1a7f37",
    "failed": "#cf222e",
}
History = tuple[dict[str, list[str]], dict[str, list[tuple[int, float]]]]


def escape(value: object, quote: bool = True) -> str:
    """HTML-escaped, and every character an XML or HTML page cannot carry shown escaped
    (checks/core/text.py): a report is one well-formed page whatever the targets said."""
    return _html_escape(for_xml(value), quote)


def _finalize(value: object) -> object:
    """What every `{{ ... }}` of the page prints: a value escaped by escape(), or markup the
    template made itself (a macro's output, which has __html__) as it is."""
    return value if hasattr(value, "__html__") else Markup(escape(value))  # noqa: S704


def _bar_chart(
    chart_id: str, rows: list[tuple[str, float, str, str]], scale: float, mark: float | None = None
) -> dict[str, object]:
    """Horizontal bars from rows of (label, value, caption, colour): `scale` maps to the full
    width, and a dashed line is drawn at the value `mark` (100% of peak on the peak chart)."""
    label_w, bar_w, row_h = 300, 420, 24
    bars = []
    for i, (label, value, caption, colour) in enumerate(rows):
        y = 5 + i * row_h
        width = max(1.0, min(value / scale, 1.0) * bar_w) if scale > 0 else 1.0
        caption_x = f"{label_w + width + 6:.1f}"
        bars.append((label, caption, colour, y + 16, y + 3, f"{width:.1f}", caption_x))
    return {
        "id": chart_id,
        "width": label_w + bar_w + 230,
        "height": row_h * len(rows) + 10,
        "label_x": label_w - 8,
        "bar_x": label_w,
        "bar_height": row_h - 6,
        "bars": bars,
        "mark": None if mark is None else f"{label_w + bar_w * mark / scale:.1f}",
    }


def _peak_chart(reports: list[TargetReport]) -> dict[str, object] | None:
    rows = []
    for report in reports:
        for check in report["checks"]:
            for m in check.get("metrics", []):
                fraction = m.get("fraction_of_peak")
                if fraction is None or m["name"].endswith("_best"):
                    continue
                threshold = m.get("threshold")
                low = threshold is not None and fraction < threshold
                caption = (
                    f"{m['value']:.4g} of {m['peak']:.4g} {m['unit']} ({fraction:.0%} of peak)"
                )
                colour = COLOURS["fail"] if low else "#0969da"
                rows.append((f"{report['target']} {m['name']}", fraction, caption, colour))
    return _bar_chart("chart-peak", rows, scale=1.2, mark=1.0) if rows else None


def _duration_chart(reports: list[TargetReport]) -> dict[str, object] | None:
    slowest: dict[str, float] = {}
    for report in reports:
        for check in report["checks"]:
            slowest[check["id"]] = max(slowest.get(check["id"], 0.0), check["duration_s"])
    top = sorted(slowest.items(), key=lambda kv: kv[1], reverse=True)[:20]
    rows = [(name, s, f"{s:.2f}s", "#57606a") for name, s in top if s > 0]
    return _bar_chart("chart-durations", rows, scale=rows[0][1]) if rows else None


def _trend(name: str, points: list[tuple[int, float]]) -> dict[str, object]:
    """One figure over recent runs: a line through each run's value, labelled by run id."""
    width, height, pad = 520, 120, 30
    values = [v for _, v in points]
    low, high = min(values), max(values)
    span = (high - low) or abs(high) or 1.0
    step = (width - 2 * pad) / max(1, len(points) - 1)
    xy = [
        (f"{pad + i * step:.1f}", f"{height - pad - (v - low) / span * (height - 2 * pad):.1f}")
        for i, v in enumerate(values)
    ]
    return {
        "name": name,
        "last": f"{values[-1]:.4g}",
        "first_run": points[0][0],
        "last_run": points[-1][0],
        "low": f"{low:.4g}",
        "high": f"{high:.4g}",
        "width": width,
        "height": height,
        "line": " ".join(f"{x},{y}" for x, y in xy),
        "dots": [(x, y, run, f"{v:.4g}") for (x, y), (run, v) in zip(xy, points, strict=True)],
    }


def _history(history: History | None) -> dict[str, object] | None:
    if history is None:
        return None
    changes, trends = history
    return {
        "changes": [(target, lines[0], lines[1:]) for target, lines in changes.items()],
        "trends": [_trend(name, points) for name, points in sorted(trends.items())],
    }


def _metrics(check: CheckResult) -> list[str]:
    figures = []
    for metric in check.get("metrics", []):
        text = f"{metric['name']} = {metric['value']:.4g} {metric['unit']}"
        if metric.get("fraction_of_peak") is not None:
            text += f" ({metric['fraction_of_peak']:.0%} of {metric['peak']:.4g})"
        figures.append(text)
    return figures


def _table(report: TargetReport) -> dict[str, object]:
    """One target's environment, and each check it ran (contract order) with its time and
    figures."""
    env = report.get("environment") or {}
    return {
        "target": report["target"],
        "torch": str(env.get("torch")),
        "cuda": str(env.get("cuda_runtime")),
        "driver": str(env.get("driver")),
        "gpus": ", ".join(g["name"] for g in env.get("gpus") or []) or "no GPU",
        "rows": [
            (c, f"{c['duration_s']:.2f}s", _metrics(c))
            for c in sorted(report["checks"], key=check_order)
        ],
    }


def _matrix(reports: list[TargetReport]) -> list[tuple[str, list[CheckResult | None]]]:
    """A row per check (contract order): per target, its result, or None where it did not run."""
    by_target = [{c["id"]: c for c in r["checks"]} for r in reports]
    checks: dict[str, CheckResult] = {}
    for report in reports:
        for check in report["checks"]:
            checks.setdefault(check["id"], check)
    return [
        (check_id, [found.get(check_id) for found in by_target])
        for check_id in sorted(checks, key=lambda i: check_order(checks[i]))
    ]


def to_html(combined: CombinedReport, history: History | None = None) -> str:
    reports = combined["targets"]
    counts = {"targets": 0, "unreachable": 0, **combined["summary"]}
    environment = jinja2.Environment(
        loader=template_loader(),
        undefined=jinja2.StrictUndefined,
        autoescape=True,
        finalize=_finalize,
        keep_trailing_newline=True,
        bytecode_cache=template_cache(),
    )
    return environment.get_template(TEMPLATE).render(
        title=f"envkit verify: {counts['targets']} target(s)",
        envkit_version=combined.get("envkit_version"),
        schema_version=combined.get("schema_version"),
        history=_history(history),
        counts=counts,
        per_target=[
            (row, f"{row['seconds']:.1f}s" if "seconds" in row else "")
            for row in combined.get("per_target", [])
        ],
        unreachable=combined.get("unreachable", []),
        colours=defaultdict(lambda: "#656d76", COLOURS),  # grey for a status it has none for
        targets=[r["target"] for r in reports],
        matrix=_matrix(reports),
        peak_chart=_peak_chart(reports),
        duration_chart=_duration_chart(reports),
        tables=[_table(r) for r in reports],
    )
