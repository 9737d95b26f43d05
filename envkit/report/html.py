"""The HTML report: one self-contained page (inline CSS and SVG, no script, nothing fetched) with
the summary, a target x check matrix, a table per target, and charts of measured vs published
peak figures and of check durations. Every value from a report is escaped."""

from __future__ import annotations

from html import escape as _html_escape
from typing import TYPE_CHECKING

from envkit.checks.core.text import for_xml
from envkit.report import check_order


def escape(value: object, quote: bool = True) -> str:
    """HTML-escaped, and every character an XML or HTML page cannot carry shown escaped
    (checks/core/text.py): a report is one well-formed page whatever the targets said."""
    return _html_escape(for_xml(value), quote)


if TYPE_CHECKING:
    from envkit.checks.core.contract import CheckResult
    from envkit.verify.combine import CombinedReport


COLOURS = {
    "pass": "#1a7f37",
    "fail": "#cf222e",
    "error": "#8250df",
    "skip": "#9a6700",
    "unreachable": "#cf222e",
    "passed": "#1a7f37",
    "failed": "#cf222e",
}
CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px;color:#1f2328}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}
.muted{color:#656d76}.cards{display:flex;gap:12px;flex-wrap:wrap;margin:16px 0}
.card{border:1px solid #d0d7de;border-radius:8px;padding:10px 16px;min-width:90px}
.card b{display:block;font-size:22px}
table{border-collapse:collapse;margin:4px 0 12px}
th,td{border:1px solid #d0d7de;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f6f8fa}td.num{text-align:right;font-variant-numeric:tabular-nums}
.st{font-weight:600;color:#fff;border-radius:4px;padding:1px 6px;white-space:nowrap}
td.cell{text-align:center}.msg{max-width:640px;white-space:pre-wrap}
svg.chart{display:block;margin:6px 0 16px}svg text{font:12px system-ui,sans-serif;fill:#1f2328}
"""


def _status(status: str) -> str:
    colour = COLOURS.get(status, "#656d76")
    return f'<span class="st" style="background:{colour}">{escape(status)}</span>'


def _summary(combined: CombinedReport) -> str:
    s = combined["summary"]
    cards = [
        ("targets", s.get("targets", 0)),
        ("unreachable", s.get("unreachable", 0)),
        ("passed", s["pass"]),
        ("failed", s["fail"]),
        ("errors", s["error"]),
        ("skipped", s["skip"]),
    ]
    out = ['<div class="cards" id="cards">']
    out += [f'<div class="card"><b>{v}</b>{escape(k)}</div>' for k, v in cards]
    out.append("</div>")
    rows = []
    for row in combined.get("per_target", []):
        seconds = row.get("seconds")
        rows.append(
            f"<tr><td>{escape(row['target'])}</td><td>{_status(row['state'])}</td>"
            + "".join(f'<td class="num">{row[k]}</td>' for k in ("pass", "fail", "error", "skip"))
            + f'<td class="num">{"" if seconds is None else f"{seconds:.1f}s"}</td></tr>'
        )
    out.append(
        '<table id="targets"><tr><th>target</th><th>state</th><th>pass</th><th>fail</th>'
        "<th>error</th><th>skip</th><th>time</th></tr>" + "".join(rows) + "</table>"
    )
    for item in combined.get("unreachable", []):
        out.append(
            f'<p class="unreachable">{_status("unreachable")} <b>{escape(item["target"])}</b>: '
            f"{escape(item['message'])}</p>"
        )
    return "\n".join(out)


def _matrix(combined: CombinedReport) -> str:
    reports = combined["targets"]
    by_target = {r["target"]: {c["id"]: c for c in r["checks"]} for r in reports}
    checks: dict[str, CheckResult] = {}
    for report in reports:
        for check in report["checks"]:
            checks.setdefault(check["id"], check)
    head = "".join(f"<th>{escape(r['target'])}</th>" for r in reports)
    rows = []
    for check_id in sorted(checks, key=lambda i: check_order(checks[i])):
        cells = []
        for report in reports:
            found = by_target[report["target"]].get(check_id)
            if found is None:
                cells.append('<td class="cell muted">-</td>')
            else:
                tip = escape(found["message"] or found["status"], quote=True)
                cells.append(f'<td class="cell" title="{tip}">{_status(found["status"])}</td>')
        rows.append(f"<tr><th>{escape(check_id)}</th>{''.join(cells)}</tr>")
    return f'<table id="matrix"><tr><th>check</th>{head}</tr>{"".join(rows)}</table>'


def _metrics(check: CheckResult) -> str:
    parts = []
    for metric in check.get("metrics", []):
        text = f"{metric['name']} = {metric['value']:.4g} {metric['unit']}"
        if metric.get("fraction_of_peak") is not None:
            text += f" ({metric['fraction_of_peak']:.0%} of {metric['peak']:.4g})"
        parts.append(escape(text))
    return "<br>".join(parts)


def _check_tables(combined: CombinedReport) -> str:
    out = []
    for index, report in enumerate(combined["targets"]):
        env = report.get("environment") or {}
        gpus = ", ".join(g["name"] for g in env.get("gpus") or []) or "no GPU"
        out.append(
            f"<h3>{escape(report['target'])}</h3><p class='muted'>torch "
            f"{escape(str(env.get('torch')))} · CUDA {escape(str(env.get('cuda_runtime')))} · "
            f"driver {escape(str(env.get('driver')))} · {escape(gpus)}</p>"
        )
        rows = [
            f"<tr><td>{escape(c['id'])}</td><td>{_status(c['status'])}</td>"
            f'<td class="num">{c["duration_s"]:.2f}s</td>'
            f'<td class="msg">{escape(c["message"] or "")}</td><td>{_metrics(c)}</td></tr>'
            for c in sorted(report["checks"], key=check_order)
        ]
        out.append(
            f'<table class="checks" id="checks-{index}"><tr><th>check</th><th>status</th>'
            "<th>time</th><th>message</th><th>figures</th></tr>" + "".join(rows) + "</table>"
        )
    return "\n".join(out)


def _bar_chart(
    chart_id: str,
    rows: list[tuple[str, float, str, str]],
    scale: float,
    mark: float | None = None,
) -> str:
    """Horizontal bars: (label, value, caption, colour); `scale` maps to the full width, and a
    dashed line is drawn at the value `mark` (100% of peak on the peak chart)."""
    label_w, bar_w, row_h = 300, 420, 24
    height = row_h * len(rows) + 10
    parts = [
        f'<svg class="chart" id="{chart_id}" width="{label_w + bar_w + 230}" '
        f'height="{height}" role="img" xmlns="http://www.w3.org/2000/svg">'
    ]
    for i, (label, value, caption, colour) in enumerate(rows):
        y = 5 + i * row_h
        width = max(1.0, min(value / scale, 1.0) * bar_w) if scale > 0 else 1.0
        parts.append(
            f'<text x="{label_w - 8}" y="{y + 16}" text-anchor="end">{escape(label)}</text>'
            f'<rect class="bar" x="{label_w}" y="{y + 3}" width="{width:.1f}" height="{row_h - 6}"'
            f' fill="{colour}"><title>{escape(caption)}</title></rect>'
            f'<text x="{label_w + width + 6:.1f}" y="{y + 16}">{escape(caption)}</text>'
        )
    if mark is not None:
        x = label_w + bar_w * mark / scale
        parts.append(
            f'<line class="peak" x1="{x:.1f}" x2="{x:.1f}" y1="0" y2="{height}" '
            'stroke="#1f2328" stroke-dasharray="4 3"/>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _peak_chart(combined: CombinedReport) -> str:
    rows = []
    for report in combined["targets"]:
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
    if not rows:
        return (
            '<p id="chart-peak-none" class="muted">No figure in this run has a published peak '
            "to compare with (the benchmarks run on CUDA GPUs only).</p>"
        )
    legend = (
        '<p class="muted">Bar: the figure measured as a share of the GPU\'s published peak; '
        "dashed line: 100%; red: below the threshold set in envkit.yaml.</p>"
    )
    return legend + _bar_chart("chart-peak", rows, scale=1.2, mark=1.0)


def _duration_chart(combined: CombinedReport) -> str:
    slowest: dict[str, float] = {}
    for report in combined["targets"]:
        for check in report["checks"]:
            slowest[check["id"]] = max(slowest.get(check["id"], 0.0), check["duration_s"])
    top = sorted(slowest.items(), key=lambda kv: kv[1], reverse=True)[:20]
    top = [(name, seconds) for name, seconds in top if seconds > 0]
    if not top:
        return '<p class="muted">No check took measurable time.</p>'
    scale = top[0][1]
    rows = [(name, s, f"{s:.2f}s", "#57606a") for name, s in top]
    return _bar_chart("chart-durations", rows, scale=scale)


History = tuple[dict[str, list[str]], dict[str, list[tuple[int, float]]]]


def _changed_box(changes: dict[str, list[str]]) -> str:
    items = []
    for target, lines in changes.items():
        head, *rest = lines
        listed = "".join(f"<li>{escape(line)}</li>" for line in rest)
        items.append(f"<p><b>{escape(target)}</b>: {escape(head)}</p><ul>{listed}</ul>")
    return '<section id="changed-since-pass">' + "".join(items) + "</section>"


def _trend_chart(index: int, name: str, points: list[tuple[int, float]]) -> str:
    """One figure over recent runs: a line through each run's value, labelled by run id."""
    width, height, pad = 520, 120, 30
    values = [v for _, v in points]
    low, high = min(values), max(values)
    span = (high - low) or abs(high) or 1.0
    step = (width - 2 * pad) / max(1, len(points) - 1)
    xy = [
        (pad + i * step, height - pad - (v - low) / span * (height - 2 * pad))
        for i, (_, v) in enumerate(points)
    ]
    line = " ".join(f"{x:.1f},{y:.1f}" for x, y in xy)
    dots = "".join(
        f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="#0969da"><title>run {run}: {v:.4g}'
        "</title></circle>"
        for (x, y), (run, v) in zip(xy, points, strict=True)
    )
    return (
        f"<p>{escape(name)}: {values[-1]:.4g} (runs {points[0][0]}..{points[-1][0]}: "
        f"{low:.4g} to {high:.4g})</p>"
        f'<svg class="chart trend" id="trend-{index}" width="{width}" height="{height}" '
        'role="img" xmlns="http://www.w3.org/2000/svg">'
        f'<polyline points="{line}" fill="none" stroke="#0969da" stroke-width="2"/>{dots}</svg>'
    )


def _history_sections(history: History | None) -> list[str]:
    if history is None:
        return []
    changes, trends = history
    charts = [_trend_chart(i, name, pts) for i, (name, pts) in enumerate(sorted(trends.items()))]
    return [
        "<h2>Changed since the last pass</h2>",
        _changed_box(changes),
        "<h2>Trends across recorded runs</h2>",
        "".join(charts) or '<p class="muted">No figures recorded yet.</p>',
    ]


def to_html(combined: CombinedReport, history: History | None = None) -> str:
    title = f"envkit verify: {combined['summary'].get('targets', 0)} target(s)"
    trends = _history_sections(history)
    body = [
        f"<h1>{escape(title)}</h1>",
        f'<p class="muted">envkit {escape(str(combined.get("envkit_version")))}, report schema '
        f"{escape(str(combined.get('schema_version')))}</p>",
        *trends[:2],
        "<h2>Summary</h2>",
        _summary(combined),
        "<h2>Checks on every target</h2>",
        _matrix(combined),
        "<h2>Measured vs published peak</h2>",
        _peak_chart(combined),
        "<h2>Slowest checks (longest on any target)</h2>",
        _duration_chart(combined),
        *trends[2:],
        "<h2>Every check, per target</h2>",
        _check_tables(combined),
    ]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title><style>{CSS}</style></head>\n<body>\n"
        + "\n".join(body)
        + "\n</body></html>\n"
    )
