"""docs/config.md is generated from the model; it must match a fresh generation."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.helpers import REPO


def test_config_reference_is_current(tmp_path: Path) -> None:
    fresh = tmp_path / "config.md"
    subprocess.run(
        [sys.executable, str(REPO / "scripts" / "gen_config_doc.py"), str(fresh)],
        check=True,
        cwd=REPO,
    )
    assert fresh.read_text() == (REPO / "docs" / "config.md").read_text(), (
        "docs/config.md is stale: run `python scripts/gen_config_doc.py`"
    )


def test_check_catalogue_is_current(tmp_path: Path) -> None:
    fresh = tmp_path / "checks.md"
    subprocess.run(
        [sys.executable, str(REPO / "scripts" / "gen_checks_doc.py"), str(fresh)],
        check=True,
        cwd=REPO,
    )
    assert fresh.read_text() == (REPO / "docs" / "checks.md").read_text(), (
        "docs/checks.md is stale: run `python scripts/gen_checks_doc.py`"
    )


def test_metrics_doc_is_current(tmp_path: Path) -> None:
    fresh = tmp_path / "metrics.md"
    subprocess.run(
        [sys.executable, str(REPO / "scripts" / "gen_metrics_doc.py"), str(fresh)],
        check=True,
        cwd=REPO,
    )
    assert fresh.read_text() == (REPO / "docs" / "metrics.md").read_text(), (
        "docs/metrics.md is stale: run `python scripts/gen_metrics_doc.py`"
    )
