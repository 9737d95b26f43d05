"""The built wheel ships the templates: installed into a fresh venv, it renders the examples
exactly as the checkout does (the golden files)."""

from __future__ import annotations

import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from tests.helpers import REPO, copy_example

GOLDEN = REPO / "tests" / "golden"


@pytest.mark.slow
def test_wheel_installs_into_a_fresh_venv_and_renders(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(dist)],
        cwd=REPO,
        check=True,
        capture_output=True,
    )
    wheel = next(dist.glob("envkit-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    for template in (
        "envkit/_templates/Dockerfile.j2",
        "envkit/_templates/docker-compose.yml.j2",
        "envkit/_templates/templates/entrypoint.sh.j2",
        "envkit/_templates/templates/report/report.html.j2",
        "envkit/catalog/compat.yaml",
        "envkit/bundle/debs.sh",  # the bundle's programs and README, read as files
        "envkit/bundle/README.bundle.md",
        "envkit/verify/remote_wrapper.sh",
        "envkit/cluster/npd-plugin.sh",
        "envkit/py.typed",
    ):
        assert template in names, f"{template} missing from the wheel"

    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    pip = [
        str(env_dir / "bin" / "python"),
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
    ]
    subprocess.run([*pip, str(wheel)], check=True, capture_output=True)

    work = tmp_path / "elsewhere"  # not the checkout: templates must come from the wheel
    work.mkdir()
    example = "team-of-three"
    config = copy_example(example, work)
    # The build context where render puts it by default: the workspace mount in the compose file
    # is the project's folder relative to it, as in the golden files.
    out = config.parent / ".envkit"
    result = subprocess.run(
        [str(env_dir / "bin" / "envkit"), "render", "-c", str(config), "-o", str(out)],
        cwd=work,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    for golden in (GOLDEN / example).rglob("*"):
        if golden.is_file():
            rel = golden.relative_to(GOLDEN / example)
            assert (out / rel).read_text() == golden.read_text(), f"{rel} differs from the golden"
