"""The CPU example across an air gap: `envkit bundle --sign` (the real cosign signs its
manifest), then in a network namespace with no route (`unshare -n`, the real kernel's), at a site
whose envkit.yaml trusts the team's key: the bundle checked and its image run through
Charliecloud's real ch-run (`verify --bundle`), loaded into the engine (`envkit load`) and
verified there; a bundle that differs from its manifest is refused before anything in it runs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import ENV_IMAGE
from tests.e2e.images import copy_project
from tests.helpers import envkit

pytestmark = [pytest.mark.docker, pytest.mark.slow]


PASSWORD = "bundle-e2e-password"


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
    bundle, site, plain = tmp_path / "bundle", tmp_path / "site", tmp_path / "plain"
    for folder in (site, plain):
        folder.mkdir()
    env = {"COSIGN_PASSWORD": PASSWORD}
    subprocess.run(
        ["cosign", "generate-key-pair"], cwd=tmp_path, env={**os.environ, **env}, check=True
    )
    made = envkit(
        "bundle", "-o", str(bundle), "--sign", str(tmp_path / "cosign.key"),
        cwd=project_dir, env=env, timeout=1800,
    )  # fmt: skip
    assert made.returncode == 0, made.stdout[-3000:] + made.stderr[-3000:]
    assert PASSWORD not in made.stdout + made.stderr
    manifest = json.loads((bundle / "MANIFEST.json").read_text())
    files = {entry["path"] for entry in manifest["files"]}
    assert {"image.tar", "rootfs.sqfs", "envkit.yaml", "envkit.lock", "sbom.cdx.json"} <= files
    assert "provenance.json" in files and (bundle / "MANIFEST.json.sig").is_file()
    # The receiving site: the team's envkit.yaml, trusting the team's public key.
    config = copy_project(project_dir, site)
    shutil.copy(tmp_path / "cosign.pub", site / "cosign.pub")
    config.write_text(config.read_text() + "signing:\n  verify: cosign.pub\n")
    assert any(name.startswith("wheels/tqdm-") for name in files), sorted(files)
    assert "MB" in made.stdout and "bundle ready" in made.stdout

    # No network at all: the suite through ch-run, from the SquashFS.
    probe = _offline("verify", "--bundle", str(bundle), "--no-bench", "--no-history", cwd=site)
    assert probe.returncode == 0, probe.stdout[-3000:] + probe.stderr[-3000:]
    assert "charliecloud://" in probe.stdout + probe.stderr

    # The engine's copy: loaded from the bundle, then verified, still offline.
    loaded = _offline("load", str(bundle), cwd=site)
    assert loaded.returncode == 0 and ENV_IMAGE in loaded.stdout, loaded.stderr
    checked = _offline("verify", "--image", ENV_IMAGE, "--no-bench", "--no-history", cwd=plain)
    assert checked.returncode == 0, checked.stdout[-3000:] + checked.stderr[-3000:]

    # One byte changed: refused by name, before anything runs or loads.
    readme = bundle / "README.md"
    readme.write_text(readme.read_text().replace("bundle", "bundIe", 1))
    for args in (("verify", "--bundle", str(bundle)), ("load", str(bundle))):
        refused = _offline(*args, cwd=site)
        assert refused.returncode == 2, refused.stdout + refused.stderr
        assert "README.md: changed" in refused.stderr and "Traceback" not in refused.stderr
    # The manifest made anew to match (as a swap would): its signature no longer does.
    (bundle / "MANIFEST.json").write_text((bundle / "MANIFEST.json").read_text() + " ")
    refused = _offline("verify", "--bundle", str(bundle), cwd=site)
    assert refused.returncode == 2 and "is not signed by the key in" in refused.stderr
