"""Both build backends on the real engine: the session's image is BuildKit's (`docker buildx`,
installed by `make test`); here the classic builder builds the same project, and the two images
are compared for what a user meets inside (packages, uv kept out of the environment, labels, no
caches or keys in any layer). Also: which builder `auto` picks where the Docker CLI is missing,
and the refusal of a builder asked for by name that is not there."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.images import copy_project, docker
from tests.helpers import envkit

pytestmark = [pytest.mark.docker, pytest.mark.slow]

# What each image holds that differs by backend only if a build went wrong.
INSIDE = r"""
import json, os, subprocess, sys
def listing(path):
    return sorted(os.listdir(path)) if os.path.isdir(path) else None
pip = subprocess.run([sys.executable, "-m", "pip", "list", "--format=json"],
                     capture_output=True, text=True, check=True).stdout
import tqdm
cache = os.path.join(os.path.dirname(tqdm.__file__), "__pycache__")
APT_OWN = ("lock", "partial", "auxfiles")
print(json.dumps({
    "pip": sorted(p["name"].lower() for p in json.loads(pip)),
    "tqdm_file": tqdm.__file__,
    "tqdm_pyc": any(n.startswith("__init__.") for n in os.listdir(cache)),
    "uv": os.access("/opt/envkit/uv/bin/uv", os.X_OK),
    "apt_lists": [n for n in listing("/var/lib/apt/lists") or [] if n not in APT_OWN],
    "apt_debs": [n for n in listing("/var/cache/apt/archives") or [] if n.endswith(".deb")],
    "uv_cache": listing("/root/.cache/uv"),
    "pip_cache": listing("/root/.cache/pip"),
    "keys": listing("/var/lib/envkit/keys"),
    "authorized": [f for _, _, fs in os.walk("/opt/envkit") for f in fs if "authorized" in f],
}))
"""


def _inside(image: str) -> dict[str, Any]:
    done = docker("run", "--rm", "--entrypoint", "python", image, "-c", INSIDE)
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_the_session_image_was_built_by_buildkit(env_image: str, project_dir: Path) -> None:
    """`auto` picks BuildKit where `docker buildx` answers; the build cache makes this rebuild
    instant, and the output names the backend."""
    again = envkit("build", cwd=project_dir)
    assert again.returncode == 0, again.stderr[-2000:]
    assert "builder: BuildKit (github.com/docker/buildx" in again.stdout
    assert "(built by buildkit)" in again.stdout and "/Dockerfile (base" in again.stdout


def test_both_backends_build_the_same_environment(env_image: str, classic_image: str) -> None:
    buildkit, classic = _inside(env_image), _inside(classic_image)
    assert buildkit["pip"] == classic["pip"], (buildkit["pip"], classic["pip"])
    for inside in (buildkit, classic):
        assert "tqdm" in inside["pip"] and "uv" not in inside["pip"], inside["pip"]
        assert str(inside["tqdm_file"]).startswith("/opt/venv/"), "into the environment"
        assert inside["tqdm_pyc"], "uv compiled the bytecode"
        assert inside["uv"], "uv stays, apart from the environment"
        assert inside["apt_lists"] == [] and inside["apt_debs"] == [], "apt caches in a layer"
        assert not inside["uv_cache"] and not inside["pip_cache"], "a download cache in a layer"
        assert inside["keys"] == [] and inside["authorized"] == [], "keys in a layer"
    labels = [
        json.loads(docker("image", "inspect", "-f", "{{json .Config.Labels}}", i).stdout)
        for i in (env_image, classic_image)
    ]
    # Each image's own steps label is its builder's Dockerfile's (the classic one has a step per
    # instruction); every other label is the same.
    steps = [label.pop("io.envkit.steps", None) for label in labels]
    assert all(steps) and steps[0] != steps[1], steps
    assert labels[0] == labels[1] and "io.envkit.inputs" in labels[0], labels


def test_buildkit_asked_for_where_the_cli_has_no_buildx_is_refused(
    project_dir: Path, tmp_path: Path
) -> None:
    copy_project(project_dir, tmp_path)
    done = envkit("build", "--builder", "buildkit", cwd=tmp_path, env={"PATH": str(tmp_path)})
    assert done.returncode == 2, done.stdout + done.stderr
    assert "--builder buildkit: the Docker CLI here has no buildx" in done.stderr
    assert "--builder classic" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / ".envkit").exists(), "refused before anything was written"
