"""Rules that span fields or files: what they accept, what they refuse, and the lists they keep
in step with the rest of envkit."""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from envkit.checks.core.registry import CHECKS
from envkit.config.fields import THRESHOLD_CHECKS
from envkit.config.load import load_text
from envkit.plan import make_plan
from envkit.render.files import render_files
from tests.helpers import EXAMPLES, TEST_HOST, envkit

KEY = (EXAMPLES / "seed-pytorch-1.11" / "keys" / "lead.pub").read_text().strip()


def test_threshold_ids_are_the_checks_that_read_one() -> None:
    from envkit.checks.suite import load

    load()
    assert all(CHECKS[check].bench or CHECKS[check].stress for check in THRESHOLD_CHECKS)


def test_up_refuses_sshd_without_any_key_before_touching_the_engine(tmp_path: Path) -> None:
    (tmp_path / "envkit.yaml").write_text("name: nokeys\n")
    assert envkit("render", cwd=tmp_path).returncode == 0, "render and build need no keys"
    done = envkit("up", cwd=tmp_path, env={"DOCKER_HOST": "unix:///nonexistent.sock"})
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "envkit.yaml:1: ssh: sshd would run with no public key" in done.stderr
    assert "ssh.allow_no_keys: true" in done.stderr


def test_allow_no_keys_is_the_explicit_way_past_it(tmp_path: Path) -> None:
    (tmp_path / "envkit.yaml").write_text("name: nokeys\nssh:\n  allow_no_keys: true\n")
    done = envkit("up", cwd=tmp_path, env={"DOCKER_HOST": "unix:///nonexistent.sock"})
    assert "public key" not in done.stderr and done.returncode == 3, done.stderr


@pytest.mark.parametrize(
    "text",
    [
        "mirrors:\n  pip: http://10.0.0.5:3141/root/pypi/simple\n  trusted_hosts: ['10.0.0.5']\n",
        "mirrors:\n  apt: http://apt-cacher.lan:3142\n",  # apt checks signatures itself
        "runtime:\n  ports: ['127.0.0.1:7000:80', '[::1]:7000:80', '7000:80/udp']\n",
        "runtime:\n  volumes: ['./data:/data', './x:/run/other', './y:/var/lib/envkitx']\n",
        "runtime:\n  env: {MY_ENVKIT: x}\n",
        "verify:\n  thresholds: {bench.matmul_bf16: 1, bench.memory_bandwidth: 0.05}\n",
        "base: {flavor: custom, image: 'registry.lan/alpine-tools/debian:12'}\n",
    ],
)
def test_legitimate_neighbours_of_refused_values_are_accepted(text: str, tmp_path: Path) -> None:
    config = f"name: a\nssh:\n  authorized_keys: ['{KEY}']\n{text}"
    make_plan(load_text(config, "envkit.yaml", tmp_path / "envkit.yaml"), TEST_HOST)


def miniforge_run(sha: str | None, dockerfile: str = "Dockerfile.classic") -> str:
    extra = f"  installer_url: https://x.org/M.sh\n  installer_sha256: {sha}\n" if sha else ""
    config = f"name: a\nbase: {{flavor: cuda}}\nssh:\n  authorized_keys: ['{KEY}']\nconda:\n{extra}"
    if not extra:
        config += "  dependencies: [numpy]\n"
    text = render_files(make_plan(load_text(config), TEST_HOST))[dockerfile]
    step = r"^RUN (?:--mount=\S+ \\\n\s+)*case .*?-b -p /opt/conda(?: \\\n[^\n]*)?$"
    found = re.search(step, text, re.S | re.M)
    assert found, "the Miniforge step"
    return found.group(0)


def _run_installer_step(run: str, tmp_path: Path, curl: str) -> subprocess.CompletedProcess[str]:
    """The rendered RUN line under sh, its paths moved into TMP_PATH, curl and bash stand-ins."""
    script = re.sub(r"^RUN (?:--mount=\S+ \\\n\s+)*", "", run)
    script = re.sub(r" \\\n && /opt/conda/bin/python -m pip install [^\n]*$", "", script)  # uv
    downloads = tmp_path / "downloads"
    downloads.mkdir(exist_ok=True)
    script = script.replace("/tmp/miniforge.sh", str(tmp_path / "m.sh"))
    script = script.replace("/var/cache/envkit/downloads", str(downloads))
    stubs = tmp_path / "bin"
    stubs.mkdir(exist_ok=True)
    (stubs / "curl").write_text(curl)
    (stubs / "bash").write_text('#!/bin/sh\nsh "$1"\n')
    for stub in stubs.iterdir():
        stub.chmod(0o755)
    return subprocess.run(
        ["sh", "-c", script],
        cwd=tmp_path,
        env={"PATH": f"{stubs}:/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.mark.parametrize("dockerfile", ["Dockerfile", "Dockerfile.classic"])
@pytest.mark.parametrize("pinned", [True, False])
def test_the_installer_runs_only_when_its_checksum_matches(
    tmp_path: Path, pinned: bool, dockerfile: str
) -> None:
    """The rendered RUN line itself (BuildKit's, with its download cache, and the classic
    builder's), under sh, with curl and bash replaced by stand-ins that fetch a local file and
    record that it ran."""
    payload = tmp_path / "payload.sh"
    payload.write_text("echo installed > ran\n")
    digest = subprocess.run(
        ["sha256sum", str(payload)], capture_output=True, text=True, check=True
    ).stdout.split()[0]
    run = miniforge_run(None if pinned else digest, dockerfile)
    if pinned:  # the pinned sums are Miniforge's; a stand-in file matches neither
        assert "1b57f8cb991982063f79b56176881093abb1dc76d73fda32102afde60585b5a1" in run
    done = _run_installer_step(run, tmp_path, f'#!/bin/sh\ncp {payload} "$3"\n')
    assert (done.returncode == 0) == (not pinned), done.stderr
    assert (tmp_path / "ran").exists() == (not pinned), "ran only when the sum matched"


def test_buildkit_reuses_a_cached_installer_only_when_its_sum_matches(tmp_path: Path) -> None:
    """BuildKit's Miniforge step downloads nothing when its cache mount holds the installer, and
    a cached file that does not match is fetched again, never run."""
    payload = tmp_path / "payload.sh"
    payload.write_text("echo installed > ran\n")
    digest = hashlib.sha256(payload.read_bytes()).hexdigest()
    run = miniforge_run(digest, "Dockerfile")
    cached = tmp_path / "downloads" / f"miniforge-{digest}.sh"
    cached.parent.mkdir()
    shutil.copy(payload, cached)
    offline = '#!/bin/sh\necho fetched >> "$0.log"; exit 7\n'
    done = _run_installer_step(run, tmp_path, offline)
    assert done.returncode == 0 and (tmp_path / "ran").exists(), done.stderr
    assert not (tmp_path / "bin" / "curl.log").exists(), "a matching cached installer is used"
    (tmp_path / "ran").unlink()
    cached.write_text("echo tampered > ran\n")
    done = _run_installer_step(run, tmp_path, offline)
    assert done.returncode != 0 and not (tmp_path / "ran").exists()
    assert (tmp_path / "bin" / "curl.log").read_text() == "fetched\n", "a bad one is fetched again"
