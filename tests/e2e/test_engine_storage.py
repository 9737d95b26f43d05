"""scripts/engine_storage.py (make test's first step) against this machine's real engine: what it
decides for an engine that holds something, and the overlayfs probe it switches on. The switch
itself restarts the engine, so it is not made here: `make test` makes it on an empty engine, and
says so on its first line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.images import ensure_base_image
from tests.helpers import REPO, script_module

pytestmark = [pytest.mark.docker]


def test_an_engine_that_holds_images_is_left_as_it_is_saying_what_it_holds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ensure_base_image()
    script = script_module("engine_storage")
    info = script.engine_info()
    assert info is not None
    monkeypatch.delenv("ENVKIT_TEST_KEEP_ENGINE", raising=False)
    reason = script.why_not(info, script.daemon_settings())
    if os.geteuid() != 0:
        assert reason == "fuse-overlayfs kept: switching the engine's driver needs root"
        return
    images = int(str(info["Images"]))
    assert images >= 1
    assert reason is not None and "the engine holds " in reason and f"{images} images" in reason
    monkeypatch.setenv("ENVKIT_TEST_KEEP_ENGINE", "1")
    assert script.why_not(info, {}) == "kept: ENVKIT_TEST_KEEP_ENGINE=1"


def test_the_script_changes_nothing_on_an_engine_it_does_not_switch() -> None:
    ensure_base_image()
    before = Path("/etc/docker/daemon.json")
    text = before.read_text() if before.is_file() else None
    driver = subprocess.run(
        ["docker", "info", "--format", "{{.Driver}}"], capture_output=True, text=True, check=True
    ).stdout.strip()
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "engine_storage.py")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    if driver == "fuse-overlayfs":  # an engine with images on it: kept, and said
        assert "fuse-overlayfs kept" in done.stdout, done.stdout
    else:
        assert done.stdout == "", done.stdout
    assert (before.read_text() if before.is_file() else None) == text
    after = subprocess.run(
        ["docker", "info", "--format", "{{json .Driver}}"], capture_output=True, text=True
    )
    assert json.loads(after.stdout) == driver


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting overlayfs needs root")
def test_the_overlayfs_probe_mounts_in_the_engines_folder_and_leaves_nothing() -> None:
    script = script_module("engine_storage")
    info = script.engine_info()
    assert info is not None
    root = Path(str(info["DockerRootDir"]))
    before = set(root.iterdir())
    assert script.overlay_mounts(root) is True  # this kernel has overlayfs (/proc/filesystems)
    assert set(root.iterdir()) == before
