"""`envkit verify --local` on this machine's torch (Debian's python3-torch): a healthy host shows
zero failures; the JSON and JUnit files are written; GPUs required on a CPU-only torch fail."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from tests.checks.conftest import _torch_python


def _verify(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "envkit", "verify", "--local", "--python", _torch_python(), *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
        env={**os.environ, "COLUMNS": "200"},
    )


def test_healthy_host_passes_with_reports(tmp_path: Path) -> None:
    done = _verify(tmp_path, "--json-file", "r.json", "--junit", "r.xml")
    assert done.returncode == 0, done.stdout[-3000:]
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["summary"]["fail"] == 0 and report["summary"]["error"] == 0
    assert report["summary"]["pass"] >= 15
    assert report["targets"][0]["target"] == "local://"
    suites = ET.parse(tmp_path / "r.xml").getroot().findall("testsuite")
    assert sum(int(s.get("tests", 0)) for s in suites) == len(report["targets"][0]["checks"])
    assert "passed" in done.stdout and "skipped" in done.stdout


def test_gpus_required_on_cpu_only_torch_exits_1(tmp_path: Path) -> None:
    done = _verify(tmp_path, "--require-gpu", "--only", "cuda.available")
    assert done.returncode == 1
    assert "CPU-only build" in done.stdout


def test_nothing_to_verify_is_a_usage_error(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "envkit", "verify"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    assert done.returncode == 2 and "--local" in done.stderr
