"""The CPU example across an air gap: `envkit bundle`, then in a network namespace with no route
(`unshare -n`, the real kernel's), the bundle checked and its image run through Charliecloud's
real ch-run (`verify --bundle`), loaded into the engine (`envkit load`) and verified there; a
bundle that differs from its manifest is refused before anything in it runs."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import ENV_IMAGE
from tests.helpers import envkit

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def _offline(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`envkit ARGS` in a network namespace of its own: loopback up (as on any machine), no
    other address and no route (the engine's unix socket still answers)."""
    inside = 'ip link set lo up && exec "$@"'
    return subprocess.run(
        ["unshare", "-n", "sh", "-c", inside, "sh", sys.executable, "-m", "envkit", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )


def test_a_bundle_crosses_an_air_gap_and_verifies_through_ch_run_and_the_engine(
    env_image: str, project_dir: Path, tmp_path: Path
) -> None:
    for tool in ("ch-run", "ch-convert", "mksquashfs", "unshare"):
        assert shutil.which(tool), f"{tool} is missing: `make system-deps` installs it"
    bundle = tmp_path / "bundle"
    made = envkit("bundle", "-o", str(bundle), cwd=project_dir, timeout=1800)
    assert made.returncode == 0, made.stdout[-3000:] + made.stderr[-3000:]
    manifest = json.loads((bundle / "MANIFEST.json").read_text())
    files = {entry["path"] for entry in manifest["files"]}
    assert {"image.tar", "rootfs.sqfs", "envkit.yaml", "envkit.lock", "sbom.cdx.json"} <= files
    assert any(name.startswith("wheels/tqdm-") for name in files), sorted(files)
    assert "MB" in made.stdout and "bundle ready" in made.stdout

    # No network at all: the suite through ch-run, from the SquashFS.
    probe = _offline("verify", "--bundle", str(bundle), "--no-bench", "--no-history", cwd=tmp_path)
    assert probe.returncode == 0, probe.stdout[-3000:] + probe.stderr[-3000:]
    assert "ch-run://" in probe.stdout + probe.stderr

    # The engine's copy: loaded from the bundle, then verified, still offline.
    shutil.copy(project_dir / "envkit.yaml", tmp_path / "envkit.yaml")
    loaded = _offline("load", str(bundle), cwd=tmp_path)
    assert loaded.returncode == 0 and ENV_IMAGE in loaded.stdout, loaded.stderr
    checked = _offline("verify", "--image", ENV_IMAGE, "--no-bench", "--no-history", cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout[-3000:] + checked.stderr[-3000:]

    # One byte changed: refused by name, before anything runs or loads.
    readme = bundle / "README.md"
    readme.write_text(readme.read_text().replace("bundle", "bundIe", 1))
    for args in (("verify", "--bundle", str(bundle)), ("load", str(bundle))):
        refused = _offline(*args, cwd=tmp_path)
        assert refused.returncode == 2, refused.stdout + refused.stderr
        assert "README.md: changed" in refused.stderr and "Traceback" not in refused.stderr
