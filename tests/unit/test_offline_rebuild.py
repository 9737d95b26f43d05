"""`envkit build --offline --from BUNDLE`: the Dockerfile it renders asks no index and no apt
source but the bundle's, bound into every RUN that installs; the bundle's files are staged in
the build context for the build and gone after, however it ends. (The rebuild itself, with no
network, is tests/e2e/test_bundle.py's.)"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import shutil
from pathlib import Path

import pytest

from envkit.bundle.manifest import write_manifest
from envkit.bundle.rebuild import offline_files, require_buildkit
from envkit.checks.programs.lockfile import Lock, format_lock
from envkit.commands.build import BuildRequest, _pinned
from envkit.errors import EnvkitError
from envkit.lock.pins import locked_plan, read_lock
from envkit.plan.image.install import OFFLINE_MOUNT
from envkit.render.files import render_files
from envkit.services.project import Project, load_project
from tests.helpers import REPO, envkit, plan_example
from tests.unit.test_lock import _lock_of, _locked_file

INSTALLS = re.compile(r"apt-get install|pip install|uv pip install")


def _instructions(dockerfile: str) -> list[str]:
    """Each instruction whole (continuation lines joined), comments dropped."""
    text = "\n".join(line for line in dockerfile.splitlines() if not line.startswith("#"))
    return re.split(r"\n(?=[A-Z]+ )", text.replace("\\\n", " "))


def test_an_offline_build_installs_from_the_bundle_alone(tmp_path: Path) -> None:
    plan = plan_example("debian-bookworm-cpu")
    path = _locked_file(tmp_path, _lock_of(plan))
    locked = locked_plan(*read_lock(path), plan, path)
    install = dataclasses.replace(plan.install, offline=True)
    dockerfile = render_files(dataclasses.replace(plan, locked=locked, install=install))[
        "Dockerfile"
    ]
    installing = [i for i in _instructions(dockerfile) if INSTALLS.search(i)]
    assert len(installing) >= 3  # apt's, uv's bootstrap, the locked pip packages
    for instruction in installing:
        assert instruction.startswith("RUN ") and OFFLINE_MOUNT in instruction, instruction
    assert "--index-url" not in dockerfile and "--extra-index-url" not in dockerfile
    assert dockerfile.count("--no-index --find-links /envkit-offline/wheels") >= 2
    apt = next(i for i in installing if "apt-get install" in i)
    # apt's configuration is the bundle's before anything of apt runs, the mirror script too
    assert apt.index("export APT_CONFIG=/envkit-offline/apt/apt.conf") < apt.index("apt-mirror")
    assert "git=1:2.39.5-0+deb12u2" in apt
    assert apt.rstrip().endswith("rm -rf /tmp/envkit-lists")  # no offline list in the image
    # The same plan online binds nothing.
    online = render_files(dataclasses.replace(plan, locked=locked))["Dockerfile"]
    assert "/envkit-offline" not in online and "--index-url" in online


def test_the_bundles_files_are_staged_for_one_build_and_gone_after(tmp_path: Path) -> None:
    bundle, context = tmp_path / "bundle", tmp_path / "context"
    (bundle / "wheels").mkdir(parents=True)
    wheel = bundle / "wheels" / "tqdm-4.67.1-py3-none-any.whl"
    wheel.write_bytes(b"a wheel")
    context.mkdir()
    staged = context / "envkit" / "offline"
    with pytest.raises(RuntimeError, match="the build failed"), offline_files(context, bundle):
        assert (staged / "wheels" / wheel.name).read_bytes() == b"a wheel"
        assert (staged / "debs" / "Packages").read_text() == ""  # no .debs: an empty index
        sources = (staged / "apt" / "offline.list").read_text()
        assert sources == "deb [trusted=yes] file:/envkit-offline/debs ./\n"
        conf = (staged / "apt" / "apt.conf").read_text()
        assert 'Dir::Etc::SourceList "/envkit-offline/apt/offline.list";' in conf
        assert 'Dir::Etc::SourceParts "/envkit-offline/apt/parts";' in conf
        raise RuntimeError("the build failed")
    assert not staged.exists()
    assert wheel.read_bytes() == b"a wheel"  # the bundle's own file untouched
    # Someone's own files where envkit stages: refused, kept.
    (staged / "notes").mkdir(parents=True)
    (staged / "notes" / "mine.txt").write_text("a member's")
    refused = pytest.raises(EnvkitError, match="holds files envkit did not stage")
    with refused, offline_files(context, bundle):
        pass
    assert (staged / "notes" / "mine.txt").read_text() == "a member's"


def test_an_offline_build_needs_buildkit_and_a_bundle() -> None:
    require_buildkit("buildkit")
    with pytest.raises(EnvkitError, match="--offline needs BuildKit") as raised:
        require_buildkit("classic")
    assert "--builder buildkit" in (raised.value.fix or "")
    for args, said in (
        (("--offline",), "--offline needs --from BUNDLE"),
        (("--from", "somewhere"), "--from BUNDLE goes with --offline"),
    ):
        done = envkit("build", *args)
        assert done.returncode == 2 and said in done.stderr, done.stderr
        assert "Traceback" not in done.stderr


def _bundle(tmp_path: Path, lock: Lock, extra: dict[str, bytes]) -> Path:
    """A bundle's statements and EXTRA files, with a manifest as `envkit bundle` writes it."""
    bundle = tmp_path / "bundle"
    bundle.mkdir(parents=True)
    text = format_lock(lock)
    (bundle / "envkit.lock").write_text(text)
    (bundle / "sbom.cdx.json").write_text("{}")
    digest = hashlib.sha256(text.encode()).hexdigest()
    made = {"buildDefinition": {"externalParameters": {"lock": {"sha256": digest}}}}
    (bundle / "provenance.json").write_text(json.dumps(made))
    for name, data in extra.items():
        (bundle / name).parent.mkdir(parents=True, exist_ok=True)
        (bundle / name).write_bytes(data)
    write_manifest(bundle, {"image": "envkit/x:latest", "project": "x"})
    return bundle


def _offline(project: Project, bundle: Path) -> Project:
    pinned, _ = _pinned(BuildRequest(offline_from=bundle), project)
    return pinned


def test_a_bundle_that_cannot_rebuild_here_is_refused_saying_why(tmp_path: Path) -> None:
    shutil.copytree(REPO / "examples" / "debian-bookworm-cpu", tmp_path / "site")
    project = load_project(str(tmp_path / "site" / "envkit.yaml"))
    lock = _lock_of(project.plan)
    lock["base"]["digest"] = ("debian@sha256:" + "d" * 64,)
    # An earlier envkit's bundle: the lock adds apt packages, and there are no .debs.
    with pytest.raises(EnvkitError, match="carries no debs/ for the lock's 3 apt packages"):
        _offline(project, _bundle(tmp_path / "old", lock, {}))
    # Built from another envkit.yaml: said, with a fix that needs no network.
    other = dict(lock)
    other["requested"] = {**lock["requested"], "pip:rich==13.0": ()}
    with pytest.raises(EnvkitError) as raised:
        _offline(project, _bundle(tmp_path / "other", other, {"debs/Packages": b""}))
    assert "no longer asks for pip:rich==13.0" in raised.value.message
    assert "the envkit.yaml the bundle carries" in (raised.value.fix or "")
    # A whole one: pinned by it, from the base by name (a loaded image has no digest), offline.
    rebuilt = _offline(project, _bundle(tmp_path / "ok", lock, {"debs/Packages": b""}))
    assert rebuilt.plan.install.offline and rebuilt.plan.locked is not None
    assert rebuilt.plan.locked.base == project.plan.image.base


NUMPY = "numpy-1.26.4-py311h64a7726_0.conda"


def _conda_lock(plan_lock: Lock, channel: str) -> Lock:
    """PLAN_LOCK with a conda environment of one package from CHANNEL, on the lock's base."""
    lock = dict(plan_lock)
    lock["conda"] = {"numpy": ("1.26.4", f"{channel}/linux-64/{NUMPY}#{'e' * 32}")}
    lock["base"] = {**plan_lock["base"], "conda-prefix": ("/opt/conda/envs/speech",)}
    return lock


def test_a_conda_environment_rebuilds_from_the_bundles_files_by_the_rattler_bootstrap(
    tmp_path: Path,
) -> None:
    """The conda example (its channels through TUNA: envkit's rattler bootstrap): py-rattler
    from the bundle's wheels by hash, each conda package from its conda/ files, nothing asked of
    a channel or an index; a bundle without them is refused, naming what is missing."""
    shutil.copytree(REPO / "examples" / "cuda-conda-tuna", tmp_path / "site")
    project = load_project(str(tmp_path / "site" / "envkit.yaml"))
    assert project.plan.conda.bootstrap == "rattler"
    mirror = dict(project.plan.conda.rc.custom_channels)["conda-forge"]
    lock = _conda_lock(_lock_of(project.plan), f"{mirror}/conda-forge")
    lock["apt"], lock["pip"] = {}, {}
    lock["base"]["digest"] = ("nvidia/cuda@sha256:" + "d" * 64,)
    with pytest.raises(EnvkitError) as raised:
        _offline(project, _bundle(tmp_path / "old", lock, {}))
    assert "py-rattler, ruamel.yaml, pip, numpy (conda/)" in raised.value.message
    files = {
        f"conda/linux-64/{NUMPY}": b"a conda package",
        "wheels/py_rattler-0.28.0-cp310-abi3-manylinux_2_17_x86_64.whl": b"a wheel",
        "wheels/ruamel.yaml-0.19.1-py3-none-any.whl": b"a wheel",
        "wheels/pip-25.2-py3-none-any.whl": b"a wheel",
    }
    rebuilt = _offline(project, _bundle(tmp_path / "ok", lock, files)).plan
    dockerfile = render_files(rebuilt)["Dockerfile"]
    installing = [i for i in _instructions(dockerfile) if "envkit-conda create" in i]
    assert len(installing) == 1 and OFFLINE_MOUNT in installing[0], installing
    assert (
        "--explicit /opt/envkit/lock/conda-explicit.txt --from /envkit-offline/conda"
        in (installing[0])
    )
    rattler = next(i for i in _instructions(dockerfile) if "--require-hashes" in i)
    assert "--no-index --find-links /envkit-offline/wheels" in rattler and OFFLINE_MOUNT in rattler
    assert "--index-url" not in dockerfile and "curl " not in dockerfile
    # Staged with its subdir, as envkit-conda --from reads it.
    with offline_files(tmp_path / "context", tmp_path / "ok" / "bundle"):
        staged = tmp_path / "context" / "envkit" / "offline" / "conda" / "linux-64" / NUMPY
        assert staged.read_bytes() == b"a conda package"


def test_a_conda_environment_from_miniforge_is_refused_offline_saying_why(tmp_path: Path) -> None:
    shutil.copytree(REPO / "examples" / "cuda-conda-tuna", tmp_path / "site")
    config = tmp_path / "site" / "envkit.yaml"
    config.write_text(config.read_text().replace("preset: tuna", "preset: official"))
    project = load_project(str(config))
    assert project.plan.conda.bootstrap == "miniforge"
    lock = _conda_lock(_lock_of(project.plan), "https://conda.anaconda.org/conda-forge")
    lock["apt"] = {}
    lock["base"]["digest"] = ("nvidia/cuda@sha256:" + "d" * 64,)
    with pytest.raises(EnvkitError) as raised:
        _offline(project, _bundle(tmp_path / "b", lock, {}))
    assert "comes from Miniforge's installer" in raised.value.message
    assert "envkit load" in (raised.value.fix or "")
