"""A conda environment.yml built for real on the engine, offline: the project's channel is the
tests' own conda-forge (tests/conda_channel.py) served on loopback as the mirror, the pip side a
local PEP 503 index. The image gets its conda tooling from that pip index (py-rattler, by hash),
its environment from that channel, solved with the same .condarc its members get; the suite
then runs in the environment's Python. The channel's python is the stand-in interpreter (a venv
of the base image's python3.11), named so here."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conda_channel import HELLO, channel_records, conda_mirror, make_channel
from tests.e2e.images import E2E_NAME, copy_project, docker, ensure_base_image
from tests.e2e.mirrors import PROBE, Recorder, pip_index
from tests.helpers import envkit, envkit_offline

pytestmark = [pytest.mark.docker, pytest.mark.slow]

NAME = "envkit-conda-e2e"
TAG = f"envkit/{NAME}:latest"
PREFIX = f"/opt/conda/envs/{NAME}"
ENVIRONMENT = """name: speech
channels:
  - conda-forge
dependencies:
  - python=3.11
  - envkit-hello
  - envkit-data
  - pip
  - pip:
      - envkit-probe
"""


@dataclass
class Mirrors:
    """The module's mirrors, served for all its tests (the same URLs, so the conda bootstrap's
    layer is built once): the channel's folder and URL, the pip index's URL, what each served."""

    channel: Path
    conda_url: str
    pip_url: str
    conda_seen: Recorder
    pip_seen: Recorder


@pytest.fixture(scope="module")
def mirrors(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mirrors]:
    root = tmp_path_factory.mktemp("conda-mirror")
    channel = make_channel(root)
    conda_seen, pip_seen = Recorder(), Recorder()
    with conda_mirror(root, conda_seen) as conda_url, pip_index(pip_seen) as pip_url:
        yield Mirrors(channel, conda_url, pip_url, conda_seen, pip_seen)


@pytest.fixture
def conda_project(project_dir: Path, tmp_path: Path, mirrors: Mirrors) -> Iterator[Path]:
    """The e2e project with conda.file: environment.yml, its conda and pip mirrors the served
    ones (what they served is emptied for each test)."""
    ensure_base_image()
    mirrors.conda_seen.paths.clear()
    mirrors.pip_seen.paths.clear()
    config = copy_project(project_dir, tmp_path)
    (tmp_path / "environment.yml").write_text(ENVIRONMENT)
    text = config.read_text().replace(f"name: {E2E_NAME}", f"name: {NAME}")
    text = text.replace("  pip: [tqdm]\n", "")
    text = text.replace("runtime:\n", "runtime:\n  build_network: host\n")
    text = text.replace(
        "  preset: official\n",
        f"  preset: official\n  conda: {mirrors.conda_url}\n  pip: {mirrors.pip_url}/simple\n"
        "  trusted_hosts: [127.0.0.1]\n",
    )
    config.write_text(text + "conda:\n  file: environment.yml\n")
    yield tmp_path
    docker("rmi", "-f", TAG, check=False)


def test_an_environment_file_builds_from_the_served_channel_and_verifies_in_its_python_standin(
    conda_project: Path, mirrors: Mirrors
) -> None:
    conda_seen, pip_seen, conda_url = mirrors.conda_seen, mirrors.pip_seen, mirrors.conda_url
    built = envkit("build", "--builder", "buildkit", cwd=conda_project)
    assert built.returncode == 0, built.stdout[-4000:] + built.stderr[-3000:]
    solved = list(conda_seen.paths)
    # lock -> build --locked -> diff, on the same servers.
    locked = [
        envkit(*command, cwd=conda_project)
        for command in (
            ("lock",),
            ("build", "--locked", "--json"),
            ("diff", "envkit.lock", f"image://{TAG}"),
        )
    ]

    # Everything came from the served mirrors: the tooling from the pip index, by hash...
    assert "/simple/py-rattler/" in pip_seen.paths and "/simple/ruamel-yaml/" in pip_seen.paths
    assert f"/packages/{PROBE}" in pip_seen.paths  # the environment's pip: section
    # ...and every conda package from the channel, through the .condarc's custom_channels.
    fetched = sorted(p.rsplit("/", 1)[1] for p in solved if p.endswith(".conda"))
    assert [f.split("-")[0] for f in fetched] == ["envkit", "envkit", "pip", "python"], fetched
    assert all(p.startswith("/cloud/conda-forge/") for p in conda_seen.paths), conda_seen.paths

    rendered = (conda_project / ".envkit" / "envkit" / "condarc").read_text()
    shown = docker(
        "run", "--rm", "--user", "1000:1000", "--entrypoint", "/bin/sh", TAG, "-c",
        "cat /opt/conda/.condarc; echo ::; envkit-conda list; echo ::; "
        "python -c 'import sys, envkit_hello, envkit_probe; "
        "print(sys.prefix, envkit_hello.SAYS, envkit_probe.SERVED_BY)'; "
        f"cat {PREFIX}/share/envkit-data/served.txt",
    ).stdout.split("::\n")  # fmt: skip
    assert shown[0] == rendered, "the image's .condarc is the one the build solved with"
    listed = {line.split()[0]: line.split() for line in shown[1].splitlines()}
    assert sorted(listed) == ["envkit-data", "envkit-hello", "pip", "python"], shown[1]
    assert listed["python"][2] == "envkit_shim"  # the stand-in interpreter, by its build
    assert listed["envkit-hello"][3] == f"{conda_url}/cloud/conda-forge"
    assert shown[2].startswith(f"{PREFIX} {HELLO} envkit-test-index"), shown[2]
    assert shown[2].endswith("served by the test channel\n")

    verified = envkit("verify", "--image", TAG, "--no-bench", "--json", cwd=conda_project)
    assert verified.returncode == 0, verified.stdout[-3000:] + verified.stderr[-2000:]
    environment = json.loads(verified.stdout)["targets"][0]["environment"]
    assert environment["python_prefix"] == PREFIX, environment  # the suite ran in the env

    # The lock records the environment's packages (URL and md5 each); the locked build installs
    # exactly those (envkit-conda's explicit install, nothing solved); the image then differs
    # from the lock in nothing.
    for done in locked:
        assert done.returncode == 0, (done.args[3:], done.stdout[-3000:], done.stderr[-3000:])
    lock = (conda_project / "envkit.lock").read_text()
    conda_lines = [line for line in lock.splitlines() if "/cloud/conda-forge/" in line]
    assert len(conda_lines) == 4, lock  # python, pip, envkit-hello, envkit-data
    assert all(re.search(r"\.conda#[0-9a-f]{32}$", line) for line in conda_lines), conda_lines
    events = [json.loads(line) for line in locked[1].stdout.splitlines() if line.startswith("{")]
    ran = [e["instruction"] for e in events if e["event"] == "step"]
    assert any("envkit-conda create" in r and "--explicit" in r for r in ran), ran
    assert not any("envkit-conda create" in r and " -f " in r for r in ran), ran


def test_a_conda_environment_bundles_and_rebuilds_with_no_network_to_the_same_lock(
    conda_project: Path, mirrors: Mirrors, tmp_path: Path
) -> None:
    """`envkit bundle` of the environment, then `build --offline --from` in a namespace with no
    route, the build's steps with no network: py-rattler from the bundle's wheels by hash, each
    conda package from its conda/ files, the pip section's package from its wheels; neither
    served mirror is asked anything, and the rebuilt image's lock is the bundle's."""
    bundle, tag = tmp_path / "bundle", f"envkit-test/offline-conda:{NAME}"
    # No rootfs.sqfs (test_bundle.py's bundle has one): minutes of mksquashfs a rebuild never reads
    bundled = ("bundle", "--no-squashfs", "-o", str(bundle))
    for command in (("build", "--builder", "buildkit"), ("lock",), bundled):
        done = envkit(*command, cwd=conda_project, timeout=1800)
        assert done.returncode == 0, (command, done.stdout[-3000:], done.stderr[-3000:])
    listed = {e["path"] for e in json.loads((bundle / "MANIFEST.json").read_text())["files"]}
    assert "image.tar" in listed and "rootfs.sqfs" not in listed, sorted(listed)
    conda_files = sorted(name for name in listed if name.startswith("conda/"))
    assert len(conda_files) == 4, conda_files  # python, pip, envkit-hello, envkit-data
    assert any(name.startswith("wheels/py_rattler-0.28.0-") for name in listed), sorted(listed)
    assert any(name.startswith("wheels/envkit_probe-") for name in listed), sorted(listed)
    mirrors.conda_seen.paths.clear()
    mirrors.pip_seen.paths.clear()
    try:
        args = ("build", "--offline", "--from", str(bundle), "--tag", tag, "--json")
        built = envkit_offline(*args, cwd=conda_project)
        assert built.returncode == 0, built.stdout[-4000:] + built.stderr[-3000:]
        events = [json.loads(line) for line in built.stdout.splitlines() if line.startswith("{")]
        ran = [e["instruction"] for e in events if e["event"] == "step"]
        assert any("envkit-conda create" in r and "--from /envkit-offline/conda" in r for r in ran)
        assert mirrors.conda_seen.paths == [] and mirrors.pip_seen.paths == []
        rebuilt = tmp_path / "rebuilt.lock"
        locked = envkit("lock", "--tag", tag, "--lock-file", str(rebuilt), cwd=conda_project)
        assert locked.returncode == 0, locked.stdout[-2000:] + locked.stderr[-2000:]
        same = envkit("diff", str(bundle / "envkit.lock"), str(rebuilt), cwd=conda_project)
        assert same.returncode == 0, same.stdout[-3000:] + same.stderr[-3000:]
        # The environment records the mirror's URLs, as the online build's does.
        assert f"{mirrors.conda_url}/cloud/conda-forge/" in rebuilt.read_text()
    finally:
        docker("rmi", "-f", tag, check=False)


def _conda_lock(records: list[tuple[str, str, str, str]]) -> str:
    text = "version: 1\nmetadata:\n  platforms: [linux-64]\n  channels: [{url: conda-forge}]\n"
    text += "package:\n"
    for subdir, name, sha256, md5 in records:
        package, version, _ = name.rsplit("-", 2)
        text += (
            f"- name: {package}\n  version: '{version}'\n  manager: conda\n  platform: linux-64\n"
            f"  url: https://conda.anaconda.org/conda-forge/{subdir}/{name}\n"
            f"  hash: {{md5: {md5}, sha256: {sha256}}}\n"
        )
    return text


def test_a_conda_lock_installs_exactly_its_packages_through_the_mirror(
    conda_project: Path, mirrors: Mirrors
) -> None:
    """The lock names conda-forge's own URLs, as real locks do; the build fetches each file from
    the mirror the .condarc routes conda-forge to, checks it against the lock, solves nothing.
    (pixi's lock, with PyPI, goes the same way: tests/e2e/test_real_projects.py's pixiproj.)"""
    config = conda_project / "envkit.yaml"
    everything = channel_records(mirrors.channel, ("python", "envkit-hello", "envkit-data"))
    (conda_project / "conda-lock.yml").write_text(_conda_lock(everything))
    seen = mirrors.conda_seen
    config.write_text(config.read_text().replace("file: environment.yml", "file: conda-lock.yml"))
    built = envkit("build", "--builder", "buildkit", cwd=conda_project)
    assert built.returncode == 0, built.stdout[-4000:] + built.stderr[-3000:]
    shown = docker("run", "--rm", "--entrypoint", "envkit-conda", TAG, "list").stdout
    listed = sorted(line.split()[0] for line in shown.splitlines())
    assert listed == ["envkit-data", "envkit-hello", "python"], shown
    # Each URL went through the mirror: the build's list names the mirror's copies, the channel
    # was asked (its index; the files themselves may come from BuildKit's cache mount, where
    # the first test left them, each checked against the lock's hash all the same).
    explicit = (conda_project / ".envkit" / "envkit" / "project" / "conda-explicit.txt").read_text()
    urls = [line.split("#")[0] for line in explicit.splitlines()[2:]]
    assert urls and all(u.startswith(f"{mirrors.conda_url}/cloud/conda-forge/") for u in urls)
    assert seen.paths and all(p.startswith("/cloud/conda-forge/") for p in seen.paths), seen.paths
