"""Rendering must not import docker, paramiko or torch (they are slow and not needed), nor the
modules of the other commands (`envkit render` builds an app with only its own command)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.helpers import copy_example

PROBE = """
import sys
from envkit.cli import main
sys.argv = ["envkit", "render", "-c", sys.argv[1], "-o", sys.argv[2]]
try:
    main()
except SystemExit:
    pass
heavy = sorted(m for m in ("docker", "paramiko", "torch", "rich") if m in sys.modules)
print("HEAVY=" + ",".join(heavy))
others = sorted(
    m for m in sys.modules
    if m.startswith(("envkit.cli.", "envkit.verify", "envkit.targets", "envkit.metrics"))
    and m not in ("envkit.cli.entry", "envkit.cli.registry",
                  "envkit.cli.project", "envkit.cli.options", "envkit.cli.complete")
)
print("OTHERS=" + ",".join(others))
"""


def test_render_imports_nothing_heavy(tmp_path: Path) -> None:
    config = copy_example("pytorch-2-tuna", tmp_path)
    result = subprocess.run(
        [sys.executable, "-c", PROBE, str(config), str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "HEAVY=\n" in result.stdout, result.stdout
    assert result.stdout.rstrip().endswith("OTHERS="), result.stdout
