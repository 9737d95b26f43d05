"""The HTML report opened in a real headless Chromium: tables laid out with a row per check and a
column per target, chart bars drawn at widths proportional to the figures, nothing fetched."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from envkit.report.html import to_html
from envkit.verify.combine import combine
from tests.browser import browser, drawn_boxes


def _check(check_id: str, status: str, seconds: float, metrics: list[Any] | None = None) -> Any:
    group = check_id.split(".")[0]
    return {
        "id": check_id,
        "group": group,
        "status": status,
        "duration_s": seconds,
        "message": f"{check_id} said <b>{status}</b>",  # markup in a message must stay text
        "metrics": metrics or [],
    }


def _fake_gpu_report(target: str, fraction: float) -> Any:  # a TargetReport
    """A report as a GPU host would send it. Fake: no GPU exists on the machines tests run on."""
    peak = 989.0
    metric = {
        "name": "tflops_bf16",
        "value": peak * fraction,
        "unit": "TFLOPS",
        "peak": peak,
        "fraction_of_peak": fraction,
        "threshold": 0.5,
    }
    checks = [
        _check("cuda.available", "pass", 0.01),
        _check("tensor.creation", "pass", 0.2),
        _check("bench.matmul_bf16", "pass" if fraction >= 0.5 else "fail", 3.0, [metric]),
    ]
    counts = {s: sum(c["status"] == s for c in checks) for s in ("pass", "fail", "skip", "error")}
    return {
        "target": target,
        "duration_s": 3.2,
        "environment": {"torch": "2.5.1", "cuda_runtime": "12.4", "driver": "550.54", "gpus": []},
        "summary": counts,
        "checks": checks,
    }


def _open(tmp_path: Path, combined: Any) -> tuple[Path, str]:
    page = tmp_path / "report.html"
    page.write_text(to_html(combined), encoding="utf-8")
    return page, page.as_uri()


def test_fake_gpu_figures_drawn_as_bars_against_peak(tmp_path: Path) -> None:
    combined = combine(
        [_fake_gpu_report("ssh://gpu-a", 0.82), _fake_gpu_report("ssh://gpu-b", 0.41)],
        {"docker://down": "container down is exited"},
        {"ssh://gpu-a": 4.0, "ssh://gpu-b": 4.5, "docker://down": 0.1},
    )
    page, url = _open(tmp_path, combined)
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page.read_text()), "fetches nothing"
    with browser() as driver:
        driver.get(url)
        matrix = driver.find_element("id", "matrix")
        rows = matrix.find_elements("tag name", "tr")
        assert len(rows) == 1 + 3, "a header and one row per check"
        assert [c.text for c in rows[0].find_elements("tag name", "th")][1:] == [
            "ssh://gpu-a",
            "ssh://gpu-b",
        ]
        bench_row = next(r for r in rows if r.text.startswith("bench.matmul_bf16"))
        assert bench_row.text.split()[1:] == ["pass", "fail"]
        targets = driver.find_element("id", "targets").find_elements("tag name", "tr")
        assert [r.text.split()[:2] for r in targets[1:]] == [
            ["ssh://gpu-a", "passed"],
            ["ssh://gpu-b", "failed"],
            ["docker://down", "unreachable"],
        ]
        bars = drawn_boxes(driver, "#chart-peak rect.bar")
        assert len(bars) == 2 and all(b["width"] > 0 and b["height"] > 0 for b in bars)
        # Drawn to scale: 82% and 41% of peak.
        assert abs(bars[0]["width"] / bars[1]["width"] - 0.82 / 0.41) < 0.01
        assert len(drawn_boxes(driver, "#chart-peak line.peak")) == 1
        durations = drawn_boxes(driver, "#chart-durations rect.bar")
        assert len(durations) == 3 and durations[0]["width"] > durations[-1]["width"] > 0
        assert "<b>" in driver.find_element("id", "checks-0").text, "messages shown as text"
        shot = tmp_path / "report.png"
        driver.save_screenshot(str(shot))
    assert shot.stat().st_size > 10_000


def test_real_cpu_report_drawn_with_matrix_and_durations(tmp_path: Path) -> None:
    """A report the suite really produced on this machine's CPU torch, through the CLI."""
    out = tmp_path / "local.html"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "envkit",
            "verify",
            "--local",
            "--python",
            "/usr/bin/python3",
            "--only",
            "tensor",
            "--only",
            "autograd",
            "--html",
            str(out),
            "--json-file",
            str(tmp_path / "local.json"),
            "-q",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((tmp_path / "local.json").read_text())
    ran = [c for c in report["targets"][0]["checks"]]
    with browser() as driver:
        driver.get(out.as_uri())
        rows = driver.find_element("id", "matrix").find_elements("tag name", "tr")
        assert len(rows) == 1 + len(ran)
        assert driver.find_element("id", "chart-peak-none").is_displayed(), "no peak on a CPU"
        bars = drawn_boxes(driver, "#chart-durations rect.bar")
        assert bars and all(b["width"] > 0 for b in bars)
        cells = driver.find_element("id", "checks-0").find_elements("css selector", "span.st")
        assert len(cells) == len(ran)
