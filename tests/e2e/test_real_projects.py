"""Real public projects from tests/data/corpus, as their teams commit them, built on the real
engine (issue 34): `envkit init --no-input --flavor custom --cuda cpu` picks the project's own
environment file; the config keeps init's choice of files and takes this machine's CPU base,
mirror CAs and test key from the e2e project (a team's edit of init's starter for their base);
then `envkit build`, `verify --image` (exit 0) and, after `envkit up`, the project's own
package imports in the box from the mounted workspace, as the login user.

- normflows (VincentStimper/normalizing-flows): a requirements.txt naming torch unpinned, which
  is envkit's torch (the base's here), not a second one;
- datasketch (ekzhu/datasketch): pyproject.toml with its uv.lock and no torch at all
  (`torch: none`), installed exactly from the lock (numpy 2 and scipy, every file's sha256),
  then `envkit lock` -> `build --locked` -> `diff envkit.lock image://…`, each exit 0;
- poetryproj and pdmproj (tests/data/projects): a Poetry and a PDM project whose poetry.lock
  and pdm.lock are installed exactly, exported in the build by Poetry and PDM themselves; each
  lock's torch (and what only it needs) left to the base's, which the package imports;
- piptoolsproj (tests/data/projects): requirements.in compiled by pip-tools' pip-compile with
  hashes, its requirements.txt installed by hash;
- uvworkspace (tests/data/projects): a uv workspace, its members' locked dependencies in the
  image and the members editable from the workspace at first start (python.install: editable),
  member a importing its sibling b;
- torchtools (jdenholm/TorchTools): its conda environment file (python<3.13 and pip from
  Anaconda's `main` channel, its tools under pip:, `-e .`), named in conda.file as its team
  would (init picks its pyproject.toml: the file's name is its own), built through the tests'
  conda channel served as the mirror's pkgs/main (a stand-in python: a venv of the base's
  python3.11, as in test_conda_build) and PyPI through a recording local index; the project
  installs itself editable from the workspace at first start, offline, with the backend the
  image holds, and imports from its src/ layout;
- pixiproj (tests/data/projects): pixi with PyPI, its manifest in pyproject.toml, its pixi.lock
  naming conda packages (through the same served channel), a PyPI wheel and the project itself
  (`pypi: .`, editable), installed exactly, the project editable from the workspace."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from envkit.files import toml_loads
from tests.conda_channel import channel_records, conda_mirror, make_channel, pixi_lock
from tests.e2e.images import docker, project_config
from tests.e2e.mirrors import Recorder, pip_index
from tests.e2e.workers import port
from tests.helpers import REPO, envkit

pytestmark = [pytest.mark.docker, pytest.mark.slow]

CORPUS = REPO / "tests" / "data" / "corpus"
# What init proposes that the team keeps: the project's own files (and python.project, conda).
PACKAGE_KEYS = {"requirements", "apt_file"}


@dataclass(frozen=True)
class RealProject:
    name: str  # the corpus folder
    uses: str  # what init must say it uses
    module: str  # the project's own package
    port: int
    locked: tuple[str, ...] = ()  # packages its lock pins: the box holds one of the lock's versions
    without_torch: bool = False  # a project that names no torch: torch: none, the base's purged
    source: str = ""  # where the package's __init__.py is in the workspace (default: module/)
    root: Path = CORPUS  # the folder the project is in
    round_trip: bool = False  # envkit lock -> build --locked -> diff, on the engine
    editable: bool = False  # python.install: editable (a workspace's members with it)

    @property
    def tag(self) -> str:
        return f"envkit/envkit-real-{self.name}:latest"


PROJECTS = [
    RealProject("normflows", "requirements.txt", "normflows", port(18847)),
    RealProject(
        "datasketch",
        "pyproject.toml and uv.lock",
        "datasketch",
        port(18848),
        ("numpy", "scipy"),
        True,
        round_trip=True,
    ),
    # Projects of the tests' own whose locks the real Poetry and PDM made (tests/data/projects):
    # each lock's torch 2.9.1, what only it needs and its CUDA libraries are left to the base's
    # torch, which the package imports beside the lock's six and tqdm.
    RealProject(
        "poetryproj",
        "pyproject.toml and poetry.lock",
        "poetryproj",
        port(18850),
        ("six", "tqdm"),
        root=REPO / "tests" / "data" / "projects",
    ),
    RealProject(
        "pdmproj",
        "pyproject.toml and pdm.lock",
        "pdmproj",
        port(18851),
        ("six", "tqdm"),
        root=REPO / "tests" / "data" / "projects",
    ),
    # A uv workspace (locked by the real uv): the members' locked dependencies in the image, the
    # members themselves editable from the workspace at first start (install: editable).
    RealProject(
        "uvworkspace",
        "pyproject.toml and uv.lock",
        "a",
        port(18853),
        ("six", "tqdm"),
        source="packages/a/src/a/__init__.py",
        root=REPO / "tests" / "data" / "projects",
        editable=True,
    ),
    # pip-tools: requirements.in compiled by the real pip-compile (--generate-hashes).
    RealProject(
        "piptoolsproj",
        "requirements.txt",
        "piptoolsproj",
        port(18852),
        ("six", "tqdm"),
        root=REPO / "tests" / "data" / "projects",
    ),
]
# pixi's manifest in pyproject.toml, its pixi.lock (written by the test: the channel's hashes
# exist only once it is made) naming conda packages, a PyPI wheel and the project itself.
PIXIPROJ = RealProject(
    "pixiproj", "pixi.lock", "pixiproj", port(18854), root=REPO / "tests" / "data" / "projects"
)
TORCHTOOLS = RealProject(
    "torchtools", "pyproject.toml", "torch_tools", port(18849), source="src/torch_tools/__init__.py"
)


def configured(folder: Path, project: RealProject, home: Path) -> None:
    """init's config for the project's folder, its files kept, the e2e base and keys taken."""
    made = envkit(
        "init", "--no-input", "--name", f"envkit-real-{project.name}", "--flavor", "custom",
        "--cuda", "cpu", cwd=folder, env={"HOME": str(home)},
    )  # fmt: skip
    assert made.returncode == 0, made.stdout + made.stderr
    assert f"uses {project.uses} (found here" in made.stdout, made.stdout
    proposed = yaml.safe_load((folder / "envkit.yaml").read_text())
    project_config(folder)  # the e2e project's settings for this machine, over init's file
    config = yaml.safe_load((folder / "envkit.yaml").read_text())
    config["name"] = proposed["name"]
    if "conda" in proposed:
        config["conda"] = proposed["conda"]
    if isinstance(proposed.get("python"), dict):  # the project, on the base's own Python
        config["python"] = {k: v for k, v in proposed["python"].items() if k != "version"}
        config["python"].update({"install": "editable"} if project.editable else {})
    packages = config["packages"]
    packages.pop("pip")
    packages.update({k: v for k, v in proposed["packages"].items() if k in PACKAGE_KEYS})
    config["ssh"]["port"] = project.port
    if project.without_torch:
        # A project without torch: none installed, and the test base's own taken away.
        packages["apt"] = [p for p in packages["apt"] if p != "python3-torch"]
        config["torch"] = "none"
        purge = {"run": "apt-get purge -y -q python3-torch", "after": "system"}
        config["build"] = {"steps": [purge]}
    (folder / "envkit.yaml").write_text(yaml.safe_dump(config, sort_keys=False))


def _copied(project: RealProject, tmp_path: Path) -> Path:
    folder = tmp_path / project.name
    shutil.copytree(project.root / project.name, folder)
    home = tmp_path / "home"
    home.mkdir()
    configured(folder, project, home)
    return folder


@pytest.fixture(params=PROJECTS, ids=lambda p: p.name)
def real_project(
    request: pytest.FixtureRequest, env_image: str, tmp_path: Path
) -> Iterator[tuple[RealProject, Path]]:
    project: RealProject = request.param
    folder = _copied(project, tmp_path)
    yield project, folder
    envkit("down", "--volumes", "--yes", cwd=folder)
    docker("rmi", "-f", project.tag, check=False)


def test_a_real_project_builds_verifies_and_imports_in_its_box(
    real_project: tuple[RealProject, Path],
) -> None:
    project, folder = real_project
    _builds_verifies_and_imports(project, folder)
    for name in project.locked:
        shown = envkit("exec", "--", "python", "-c", f"import {name}; print({name}.__version__)",
                       cwd=folder)  # fmt: skip
        pinned = _pinned(folder / project.uses.split(" and ")[-1], name)
        assert shown.stdout.split()[-1] in pinned, (name, shown.stdout, pinned)
    if project.round_trip:  # the uv.lock project's envkit.lock round trip, on the engine
        made = envkit("lock", cwd=folder)
        assert made.returncode == 0, made.stdout + made.stderr
        assert "project:" in (folder / "envkit.lock").read_text(), "the project is requested"
        for command in (
            ("build", "--locked", "--quiet"),
            ("diff", "envkit.lock", f"image://{project.tag}"),
        ):
            done = envkit(*command, cwd=folder)
            assert done.returncode == 0, (command, done.stdout[-3000:] + done.stderr[-2000:])


def test_a_real_conda_project_builds_through_the_mirror_and_installs_itself_at_first_start(
    env_image: str, tmp_path: Path
) -> None:
    project = TORCHTOOLS
    folder = _copied(project, tmp_path)
    root = tmp_path / "conda-mirror"
    make_channel(root, at="pkgs/main")  # Anaconda's main, where a mirror's root keeps it,
    make_channel(root)  # and conda-forge, the .condarc's own channel (asked after the file's)
    conda_seen, pip_seen = Recorder(), Recorder()
    config = yaml.safe_load((folder / "envkit.yaml").read_text())
    config.pop("python", None)  # init's pick (pyproject.toml); the team names its conda file
    config["conda"] = {"file": "requirements-dev.conda.yaml"}
    # What its pyproject needs beside the file (`-e .` installs with --no-deps): Debian's
    # torchvision, built for the base's torch; scikit-image from PyPI.
    config["packages"]["apt"].append("python3-torchvision")
    config["packages"]["pip"] = ["scikit-image"]
    config["runtime"]["build_network"] = "host"
    try:
        _through_served_mirrors(project, folder, config, root, conda_seen, pip_seen)
        fetched = sorted(p.rsplit("/", 1)[1].split("-")[0] for p in conda_seen.paths
                         if p.endswith(".conda"))  # fmt: skip
        assert fetched == ["pip", "python"], conda_seen.paths  # the file's, from pkgs/main
        packages = [p for p in conda_seen.paths if p.endswith(".conda")]
        assert all(p.startswith("/pkgs/main/") for p in packages), packages  # its first channel
        assert "/simple/sphinx/" in pip_seen.paths, "the file's pip: section, from the mirror"
        said = envkit("exec", "--", "python", "-m", "pip", "show", "torch_tools", cwd=folder)
        assert "Editable project location: /workspace" in said.stdout, said.stdout[-2000:]
    finally:
        envkit("down", "--volumes", "--yes", cwd=folder)
        docker("rmi", "-f", project.tag, check=False)


def test_a_pixi_project_with_pypi_installs_its_lock_and_itself_from_the_workspace(
    env_image: str, tmp_path: Path
) -> None:
    """pixiproj (tests/data/projects): init picks its pixi.lock; the build installs the lock's
    conda packages exactly through the tests' channel served as conda-forge's mirror (a stand-in
    python, as in test_conda_build) and its PyPI wheel by sha256 through a recording index; the
    lock's `pypi: .` (the project itself, editable) installs from the workspace at first start,
    its package importing the conda package, the PyPI one and the base's torch."""
    root = tmp_path / "conda-mirror"
    channel = make_channel(root)
    source = tmp_path / "source"
    shutil.copytree(PIXIPROJ.root / PIXIPROJ.name, source / PIXIPROJ.name)
    records = channel_records(channel, ("python", "envkit-hello"))
    (source / PIXIPROJ.name / "pixi.lock").write_text(pixi_lock(records, itself=PIXIPROJ.name))
    project = replace(PIXIPROJ, root=source)
    folder = _copied(project, tmp_path)
    config = yaml.safe_load((folder / "envkit.yaml").read_text())
    assert config["conda"] == {"file": "pixi.lock"}, config.get("conda")
    config["runtime"]["build_network"] = "host"
    conda_seen, pip_seen = Recorder(), Recorder()
    try:
        conda_url = _through_served_mirrors(project, folder, config, root, conda_seen, pip_seen)
        # The lock's packages exactly, each through the mirror the .condarc routes conda-forge to
        shown = docker("run", "--rm", "--entrypoint", "envkit-conda", project.tag, "list").stdout
        assert sorted(line.split()[0] for line in shown.splitlines()) == ["envkit-hello", "python"]
        assert conda_seen.paths and all(
            p.startswith("/cloud/conda-forge/") for p in conda_seen.paths
        )
        explicit = folder / ".envkit" / "envkit" / "project" / "conda-explicit.txt"
        urls = [line.split("#")[0] for line in explicit.read_text().splitlines()[2:]]
        assert urls and all(u.startswith(f"{conda_url}/cloud/conda-forge/") for u in urls), urls
        # its PyPI wheel by version and sha256 through the pip mirror, the test index's own
        assert "/simple/envkit-probe/" in pip_seen.paths, pip_seen.paths
        probe = "import envkit_probe; print(envkit_probe.SERVED_BY)"
        served = docker("run", "--rm", "--entrypoint", "python", project.tag, "-c", probe)
        assert served.stdout.strip() == "envkit-test-index", served.stdout
        # No pip in a pixi environment: the install's own record (PEP 610's direct_url.json).
        record = "import importlib.metadata as m; print(m.distribution('pixiproj')"
        record += ".read_text('direct_url.json'))"
        said = envkit("exec", "--", "python", "-c", record, cwd=folder)
        direct = json.loads(said.stdout.strip().splitlines()[-1])
        assert direct == {"url": "file:///workspace", "dir_info": {"editable": True}}, direct
    finally:
        envkit("down", "--volumes", "--yes", cwd=folder)
        docker("rmi", "-f", project.tag, check=False)


def _through_served_mirrors(
    project: RealProject,
    folder: Path,
    config: dict[str, Any],
    root: Path,
    conda_seen: Recorder,
    pip_seen: Recorder,
) -> str:
    """_builds_verifies_and_imports with CONFIG's conda and pip mirrors the tests' channel under
    ROOT and a recording pip index, served for the build; the channel's URL."""
    with conda_mirror(root, conda_seen) as conda_url, pip_index(pip_seen) as pip_url:
        config["mirrors"].update(
            {"conda": conda_url, "pip": f"{pip_url}/simple", "trusted_hosts": ["127.0.0.1"]}
        )
        (folder / "envkit.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
        _builds_verifies_and_imports(project, folder)
    return conda_url


def _pinned(path: Path, name: str) -> set[str]:
    """The versions of NAME a lock (TOML [[package]] tables) or a compiled requirements file
    pins."""
    if path.suffix == ".lock":
        return {p["version"] for p in toml_loads(path.read_text())["package"] if p["name"] == name}
    return set(re.findall(rf"^{re.escape(name)}==(\S+)", path.read_text(), re.MULTILINE))


def _builds_verifies_and_imports(project: RealProject, folder: Path) -> None:
    """build and verify --image exit 0; after `envkit up`, the project's own package imports
    in the box from the mounted workspace, its files the login user's."""
    built = envkit("build", "--quiet", cwd=folder)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    verified = envkit("verify", "--image", project.tag, "--no-bench", cwd=folder)
    assert verified.returncode == 0, verified.stdout[-3000:] + verified.stderr[-2000:]

    shutil.chown(folder, 1000, 1000)  # the member's folder (ssh.uid 1000 is the member here)
    for path in folder.rglob("*"):
        shutil.chown(path, 1000, 1000)
    up = envkit("up", cwd=folder)
    assert up.returncode == 0, up.stdout[-3000:] + up.stderr[-2000:]
    module, source = project.module, project.source or f"{project.module}/__init__.py"
    imported = envkit(
        "exec", "--", "sh", "-c",
        f"id -un; stat -c %U {source}; python -c 'import {module}, sys;"
        f" print({module}.__file__); print(\"torch\" in sys.modules)'",
        cwd=folder,
    )  # fmt: skip
    assert imported.returncode == 0, imported.stdout + imported.stderr
    user, owner, where, torch_loaded = imported.stdout.split()[-4:]
    assert user == owner == "dev", "the project's files are the login user's"
    assert where == f"/workspace/{source}", "the project's own source, mounted"
    assert torch_loaded == str(not project.without_torch), imported.stdout
