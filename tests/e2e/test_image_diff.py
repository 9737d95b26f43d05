"""`envkit diff --layers` on two real images the engine built from the same Dockerfile: the
layers that match are passed over, and in each that differs every file is named with how it
differs (content, only on one side, only its time)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.e2e.images import E2E_NAME, docker
from tests.helpers import envkit

pytestmark = [pytest.mark.docker]

DOCKERFILE = (
    "FROM scratch\nCOPY same.txt /same.txt\nCOPY varies/ /varies/\nLABEL io.envkit.test=1\n"
)


def _build(folder: Path, tag: str, files: dict[str, tuple[str, int]]) -> None:
    (folder / "varies").mkdir(parents=True)
    (folder / "Dockerfile").write_text(DOCKERFILE)
    (folder / "same.txt").write_text("the same in both\n")
    os.utime(folder / "same.txt", (1_600_000_000, 1_600_000_000))
    for name, (text, mtime) in files.items():
        (folder / "varies" / name).write_text(text)
        os.utime(folder / "varies" / name, (mtime, mtime))
    os.utime(folder / "varies", (1_600_000_000, 1_600_000_000))
    env = {**os.environ, "DOCKER_BUILDKIT": "0"}
    subprocess.run(["docker", "build", "-q", "-t", tag, str(folder)], env=env, check=True)


def test_two_builds_differ_in_one_layer_and_each_file_is_named(tmp_path: Path) -> None:
    left, right = f"envkit-test/diff-left:{E2E_NAME}", f"envkit-test/diff-right:{E2E_NAME}"
    try:
        _build(tmp_path / "a", left, {"lock.txt": ("pins\n", 1_600_000_000), "log": ("a\n", 1)})
        _build(
            tmp_path / "b",
            right,
            {"lock.txt": ("pins\n", 1_700_000_000), "log": ("b\n", 1), "new": ("n\n", 1)},
        )
        done = envkit("diff", "--layers", left, right, "--json")
        assert done.returncode == 1, done.stderr
        layers = json.loads(done.stdout)
        assert [layer["index"] for layer in layers] == [2], "the first layer is the same bytes"
        files = {f["path"]: f["what"] for f in layers[0]["files"]}
        # The folder's own time follows what was written into it, on some storage drivers.
        assert files.pop("/varies", "time only") == "time only", files
        assert files == {
            "/varies/lock.txt": "time only",
            "/varies/log": "content",
            "/varies/new": f"only in {right}",
        }, files
        assert "COPY" in layers[0]["step"] and "varies" in layers[0]["step"]
        same = envkit("diff", "--layers", left, left)
        assert same.returncode == 0 and "the same layers" in same.stdout, same.stdout
        table = envkit("diff", "--layers", left, right)
        assert "/varies/log  content" in table.stdout and "1 layers differ" in table.stdout
        missing = envkit("diff", "--layers", left, "envkit-test/no-such-image:x")
        assert missing.returncode == 2 and "Traceback" not in missing.stderr, missing.stderr
    finally:
        docker("rmi", "-f", left, right, check=False)
