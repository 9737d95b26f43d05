"""The GPU evidence script, dry-run on this GPU-less machine with the system python's CPU torch
(the same interpreter `envkit verify --local --python /usr/bin/python3` checks): it must write
the report, the fingerprint and the date, and publish them with the HTML report."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).parents[2]
SYSTEM_PYTHON = Path("/usr/bin/python3")


@pytest.mark.slow
def test_evidence_run_and_publish(tmp_path: Path) -> None:
    has_torch = subprocess.run([str(SYSTEM_PYTHON), "-c", "import torch"], check=False)
    assert has_torch.returncode == 0, "`make system-deps` installs python3-torch"
    out = tmp_path / "out"
    script = str(REPO / "scripts" / "gpu_evidence.py")
    ran = subprocess.run(
        [str(SYSTEM_PYTHON), script, "run", "--out", str(out), "--no-require-gpu"],
        capture_output=True,
        text=True,
        check=False,
        timeout=900,
    )
    assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr[-2000:]
    report = json.loads((out / "report.json").read_text())
    assert report["summary"]["pass"] > 10 and report["summary"]["fail"] == 0
    assert (
        json.loads((out / "fingerprint.json").read_text())["torch"]
        == report["environment"]["torch"]
    )
    done = subprocess.run(
        [sys.executable, script, "publish", str(out), "--into", str(tmp_path / "evidence")],
        capture_output=True,
        text=True,
        check=True,
    )
    published = Path(done.stdout.strip())
    assert published.parent == tmp_path / "evidence" and published.name.endswith("-no-gpu")
    assert {p.name for p in published.iterdir()} == {
        "report.json",
        "report.html",
        "fingerprint.json",
        "date.txt",
        "health.txt",
        "metrics.prom",
    }
    assert "<html" in (published / "report.html").read_text().lower()
    # The node's verdict in both of health's modes, and the run as envkit metrics exports it.
    health = (published / "health.txt").read_text()
    assert "$ health \n" in health and "$ health --npd\n" in health and "exit " in health
    exported = (published / "metrics.prom").read_text()
    assert 'envkit_run_healthy{target="local://gpu-evidence"' in exported
