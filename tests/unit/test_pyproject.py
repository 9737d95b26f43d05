"""python.project (issue 29): a project's pyproject.toml, and its uv.lock installed exactly.

The locks under tests/data/projects were made by the real uv (`uv lock` against PyPI); the
rendered layer's `uv export` arguments are run here by the real uv on them, so what the image
installs is what these tests read. Every refusal names the file and line, and writes nothing."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO, envkit, render_refused

PROJECTS = REPO / "tests" / "data" / "projects"
UV = Path(sys.executable).parent / "uv"
CPU = "name: app\nbase: {flavor: custom, image: 'debian:bookworm'}\nssh: {allow_no_keys: true}\n"
TORCH = "name: app\ntorch: '2.5.1'\nssh: {allow_no_keys: true}\n"


def _project(tmp_path: Path, source: str, config: str, python: str = "  project: .\n") -> Path:
    target = tmp_path / "app"
    shutil.copytree(PROJECTS / source, target)
    (target / "envkit.yaml").write_text(config + "python:\n" + python)
    return target


def _rendered(project: Path) -> str:
    done = envkit("render", cwd=project)
    assert done.returncode == 0, done.stdout + done.stderr
    return (project / ".envkit" / "Dockerfile").read_text()


def _exported(project: Path, dockerfile: str) -> list[tuple[str, str]]:
    """What the layer's `uv export` writes, run by the real uv on the context's copy."""
    line = next(x for x in dockerfile.splitlines() if "/uv export " in x)
    words = shlex.split(line.split("/uv export ", 1)[1].split(" -o ", 1)[0])
    context = project / ".envkit" / "envkit" / "project"
    done = subprocess.run(
        [str(UV), "export", *words], cwd=context, capture_output=True, text=True, check=True
    )
    return sorted(re.findall(r"^([a-z0-9-]+)==(\S+)", done.stdout, re.M))


def test_a_lock_is_installed_exactly_with_hashes_and_the_extra(tmp_path: Path) -> None:
    project = _project(tmp_path, "uvproj", CPU, "  project: .\n  extras: [colour]\n")
    dockerfile = _rendered(project)
    assert "--no-deps --require-hashes" in dockerfile
    copied = project / ".envkit" / "envkit" / "project"
    assert (copied / "uv.lock").read_text() == (project / "uv.lock").read_text()
    assert _exported(project, dockerfile) == [
        ("colorama", "0.4.6"),
        ("six", "1.16.0"),
        ("tqdm", "4.70.1"),  # the lock's version, not the newest tqdm>=4.60 allows
    ], "no dependency group: not dev's pytest, nor default-groups' docs (idna)"


def test_the_dependency_groups_named_install_and_an_unknown_one_is_refused(tmp_path: Path) -> None:
    """python.groups: [docs] exports the lock's docs group (uv's `--group`), not dev's pytest;
    without the lock, the group's lines are installed with the dependencies; PDM's exporter
    is asked for it without --prod (which refuses a named group), Poetry's with --with; a
    group the project does not declare is refused at its file, naming those it has."""
    project = _project(tmp_path / "uv", "uvproj", CPU, "  project: .\n  groups: [docs]\n")
    dockerfile = _rendered(project)
    exported = _exported(project, dockerfile)
    assert ("idna", "3.7") in exported and "pytest" not in dict(exported), exported
    (project / "uv.lock").unlink()
    shutil.rmtree(project / ".envkit")
    layer = _rendered(project).split("python.project; no uv.lock", 1)[1].split("\n\n", 1)[0]
    assert "idna==3.7" in layer and "pytest" not in layer, layer
    pdm = _project(tmp_path / "pdm", "pdmproj", APT_TORCH, "  project: .\n  groups: [lint]\n")
    with (pdm / "pyproject.toml").open("a") as pyproject:
        pyproject.write('\n[dependency-groups]\nlint = ["six"]\n')
    layer = _rendered(pdm).split("The project's pdm.lock, exactly", 1)[1].split("\n\n")[0]
    assert "pdm export --format requirements" in layer and "--group lint" in layer, layer
    assert "--prod" not in layer, layer
    poetry = _project(
        tmp_path / "poetry", "poetryproj", APT_TORCH, "  project: .\n  groups: [dev]\n"
    )
    with (poetry / "pyproject.toml").open("a") as pyproject:
        pyproject.write('\n[tool.poetry.group.dev.dependencies]\ntqdm = ">=4.60,<4.67"\n')
    layer = _rendered(poetry).split("The project's poetry.lock, exactly", 1)[1].split("\n\n")[0]
    assert "--with dev" in layer, layer
    refused = _project(tmp_path / "no", "uvproj", CPU, "  project: .\n  groups: [lint]\n")
    said = render_refused(refused)
    assert "no dependency group 'lint' (it has: dev, docs)" in said, said
    assert "python.groups" in said, said


@pytest.mark.parametrize("source", ["pdmproj", "poetryproj"])
def test_a_poetry_or_pdm_locks_git_package_installs_at_its_commit_as_a_uv_locks_does(
    tmp_path: Path, source: str
) -> None:
    """A git package that a Poetry or PDM lock resolved to a commit: left out of the hashed
    export and installed at that commit (git has no sha256), as a uv.lock's; before, the whole
    lock was refused ("publish it to an index"). One not pinned to a commit stays refused."""
    commit = "65486e4383f9f411da95937451205d3c7b61b9e1"
    project = _project(tmp_path / "git", source, APT_TORCH)
    lock_name = "pdm.lock" if source == "pdmproj" else "poetry.lock"
    lock = project / lock_name
    text = lock.read_text()
    start = text.index('name = "six"')
    end = text.index("[[package]]", start)
    if source == "pdmproj":
        git = f'git = "https://github.com/benjaminp/six.git"\nrevision = "{commit}"\n'
        six = text[start:end].split("files = [")[0] + git + "\n"
    else:
        git = '[package.source]\ntype = "git"\nurl = "https://github.com/benjaminp/six.git"\n'
        git += f'reference = "HEAD"\nresolved_reference = "{commit}"\n'
        six = text[start:end].split("files = [")[0] + "files = []\n\n" + git + "\n"
    lock.write_text(text[:start] + six + text[end:])
    layer = _rendered(project).split(f"The project's {lock_name}, exactly", 1)[1].split("\n\n")[0]
    dropped = layer.split("drop_requirements.py ", 1)[1].split(" <", 1)[0].split()
    assert "six" in dropped, dropped
    assert f"'six @ git+https://github.com/benjaminp/six.git@{commit}'" in layer, layer
    lock.write_text(lock.read_text().replace(commit, ""))
    shutil.rmtree(project / ".envkit")
    assert "no sum can check it" in render_refused(project)


def test_a_locks_git_package_installs_at_its_commit_beside_the_hashed_lock(tmp_path: Path) -> None:
    """prime-rl's uv.lock takes one package from git: it is installed at the commit the lock
    resolved (git has no sha256), the rest still hashed; before, the whole lock was refused.
    An unpinned git source stays refused at its line."""
    project = _project(tmp_path, "uvproj", CPU)
    commit = "65486e4383f9f411da95937451205d3c7b61b9e1"
    text = (project / "uv.lock").read_text()
    six = text[text.index('name = "six"') : text.index("[[package]]", text.index('name = "six"'))]
    git = f"https://github.com/benjaminp/six.git?rev=1.16.0#{commit}"
    pinned = f'name = "six"\nversion = "1.16.0"\nsource = {{ git = "{git}" }}\n\n'
    (project / "uv.lock").write_text(text.replace(six, pinned))
    dockerfile = _rendered(project)
    installed = "--no-deps --index-url https://pypi.org/simple 'six @ git+https://github.com/"
    assert f"{installed}benjaminp/six.git@{commit}'" in dockerfile, dockerfile
    exported = _exported(project, dockerfile)
    assert exported == [("colorama", "0.4.6"), ("tqdm", "4.70.1")], "six from git, not the lock"
    (project / "uv.lock").write_text(text.replace(six, pinned.replace(f"#{commit}", "")))
    shutil.rmtree(project / ".envkit")
    assert "the lock takes six from git" in render_refused(project)


def test_a_locks_package_from_a_folder_of_the_project_is_editable_at_first_start(
    tmp_path: Path,
) -> None:
    """prime-rl's uv.lock takes a package from a folder of the project (`{ editable = "deps/x"
    }`): it is installed editable from the mounted workspace at first start, as `uv sync` has
    it, and left out of the export; a folder outside the project stays refused at its line."""
    project = _project(tmp_path, "uvproj", CPU)
    (project / "vendor" / "six").mkdir(parents=True)
    text = (project / "uv.lock").read_text()
    six = text[text.index('name = "six"') : text.index("[[package]]", text.index('name = "six"'))]
    local = 'name = "six"\nversion = "1.16.0"\nsource = { editable = "vendor/six" }\n\n'
    (project / "uv.lock").write_text(text.replace(six, local))
    dockerfile = _rendered(project)
    assert _exported(project, dockerfile) == [("colorama", "0.4.6"), ("tqdm", "4.70.1")]
    entrypoint = (project / ".envkit" / "envkit" / "runtime" / "entrypoint.sh").read_text()
    assert "for folder in /workspace/vendor/six ;" in entrypoint, entrypoint
    (project / "uv.lock").write_text(text.replace(six, local.replace("vendor", "../vendor")))
    shutil.rmtree(project / ".envkit")
    assert "the lock takes six from editable ../vendor/six" in render_refused(project)


def test_a_locked_torch_comes_from_envkits_torch_layer_not_the_lock(tmp_path: Path) -> None:
    project = _project(tmp_path, "uvtorch", TORCH)
    dockerfile = _rendered(project)
    # sympy is the project's and torch's: it stays; what only torch needs does not come again
    assert _exported(project, dockerfile) == [
        ("mpmath", "1.3.0"),
        ("six", "1.16.0"),
        ("sympy", "1.13.1"),
    ]
    assert "--no-emit-package nvidia-cublas-cu12" in dockerfile
    assert "--no-emit-package torch " in dockerfile


def test_without_a_lock_the_dependencies_install_and_torchs_bound_is_checked(
    tmp_path: Path,
) -> None:
    project = _project(tmp_path, "uvtorch", TORCH)
    (project / "uv.lock").unlink()
    dockerfile = _rendered(project)
    layer = dockerfile.split("python.project; no uv.lock", 1)[1].split("\n\n", 1)[0]
    assert "six==1.16.0" in layer and "sympy" in layer
    assert "torch==" not in layer, "torch is envkit's layer's, pinned by its constraint"

    shutil.rmtree(project / ".envkit")
    (project / "envkit.yaml").write_text(
        TORCH.replace("2.5.1", "2.4.1") + "python:\n  project: .\n"
    )
    said = render_refused(project)
    assert "pyproject.toml:5:" in said and "does not admit torch 2.4.1" in said


@pytest.mark.parametrize(
    ("change", "said"),
    [
        # the lock pins another torch than envkit installs
        (lambda p: _set(p, "envkit.yaml", "'2.5.1'", "'2.4.1'"), "torch==2.5.1 does not admit"),
        # a dependency added to pyproject.toml after `uv lock`
        (lambda p: _set(p, "pyproject.toml", '"six==1.16.0"', '"six==1.16.0", "idna"'), "+idna"),
        # a package the lock takes from a folder (not in the build context, no hash)
        (
            lambda p: _set(
                p,
                "uv.lock",
                'name = "six"\nversion = "1.16.0"\nsource = { registry'
                ' = "https://pypi.org/simple" }',
                'name = "six"\nversion = "1.16.0"\nsource = { directory = "../six" }',
            ),
            "from directory ../six",
        ),
        # a workspace lock naming members it holds no package of (hand-edited, or stale)
        (
            lambda p: _set(
                p,
                "uv.lock",
                "\n[[package]]",
                '\n[manifest]\nmembers = ["a", "b"]\n\n[[package]]',
                count=1,
            ),
            "names the workspace member a, but holds no package of it",
        ),
        # a lock format envkit does not read
        (lambda p: _set(p, "uv.lock", "version = 1\n", "version = 9\n", count=1), "format"),
        # not TOML at all
        (lambda p: _set(p, "uv.lock", "[[package]]", "[[package", count=1), "not valid TOML"),
    ],
    ids=["torch", "stale", "directory", "workspace", "format", "syntax"],
)
def test_a_lock_envkit_cannot_install_exactly_is_refused_with_its_line(
    tmp_path: Path, change: object, said: str
) -> None:
    project = _project(tmp_path, "uvtorch", TORCH)
    change(project)  # type: ignore[operator]
    stderr = render_refused(project)
    assert said in stderr, stderr
    assert re.search(r"(uv\.lock|pyproject\.toml):\d+:", stderr), stderr
    assert "fix:" in stderr


def _set(project: Path, name: str, old: str, new: str, count: int = -1) -> None:
    path = project / name
    text = path.read_text()
    assert old in text, (name, old)
    path.write_text(text.replace(old, new, count))


def test_the_locked_torch_mismatch_points_at_the_locks_torch(tmp_path: Path) -> None:
    project = _project(tmp_path, "uvtorch", TORCH)
    # pyproject admits 2.4.1; the lock still pins 2.5.1
    _set(project, "pyproject.toml", "torch==2.5.1", "torch>=2.4")
    _set(project, "envkit.yaml", "'2.5.1'", "'2.4.1'")
    _set(project, "uv.lock", 'specifier = "==2.5.1"', 'specifier = ">=2.4"')
    stderr = render_refused(project)
    torch_line = (project / "uv.lock").read_text().splitlines().index('name = "torch"') + 1
    assert f"uv.lock:{torch_line}:" in stderr and "pins torch 2.5.1" in stderr, stderr


@pytest.mark.parametrize(
    ("setup", "python", "said"),
    [
        (lambda p: None, "  project: .\n  extras: [gpu]\n", "no extra 'gpu'"),
        (lambda p: (p / "pyproject.toml").unlink(), "  project: .\n", "envkit.yaml:5:"),
        (lambda p: None, "  project: ../elsewhere\n", "leaves the project"),
        (
            # dynamic dependencies and no lock that records what the build decided
            lambda p: (
                (p / "uv.lock").unlink(),
                (p / "pyproject.toml").write_text(
                    '[project]\nname = "x"\nversion = "1"\ndynamic = ["dependencies"]\n'
                ),
            ),
            "  project: .\n",
            "dependencies are dynamic",
        ),
        (
            lambda p: _link_out(p),
            "  project: .\n",
            "leaves the project",
        ),
    ],
    ids=["extra", "missing", "dotdot", "dynamic", "symlink-out"],
)
def test_a_project_envkit_cannot_read_is_refused(
    tmp_path: Path, setup: object, python: str, said: str
) -> None:
    project = _project(tmp_path, "uvproj", CPU, python)
    setup(project)  # type: ignore[operator]
    stderr = render_refused(project)
    assert said in stderr, stderr


def _link_out(project: Path) -> None:
    outside = project.parent / "outside.toml"
    outside.write_text((project / "pyproject.toml").read_text())
    (project / "pyproject.toml").unlink()
    (project / "pyproject.toml").symlink_to(outside)


def test_python_as_a_version_or_a_mapping_means_the_same_interpreter(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "envkit.yaml").write_text(
        "name: app\nbase: {flavor: cuda}\npython: '3.11'\nssh: {allow_no_keys: true}\n"
    )
    mapped = tmp_path / "mapped"
    mapped.mkdir()
    (mapped / "envkit.yaml").write_text(
        "name: app\nbase: {flavor: cuda}\npython: {version: '3.11'}\nssh: {allow_no_keys: true}\n"
    )
    assert _rendered(plain) == _rendered(mapped)
    (mapped / "envkit.yaml").write_text(
        "name: app\nbase: {flavor: cuda}\npython: '2.7'\nssh: {allow_no_keys: true}\n"
    )
    shutil.rmtree(mapped / ".envkit")
    assert "envkit.yaml:3: python: not a valid python version" in render_refused(mapped)


@pytest.mark.parametrize(("floor", "locked"), [(">=2.1", True), (">=2.6", False)])
def test_a_file_with_a_torch_floor_takes_the_release_the_projects_lock_holds(
    tmp_path: Path, floor: str, locked: bool
) -> None:
    """speechbrain: its README installs requirements.txt (torch>=2.1.0), and its uv.lock locks
    the torch the team runs: that release, where the file admits it, not envkit's newest."""
    project = tmp_path / "app"
    shutil.copytree(PROJECTS / "uvtorch", project)
    (project / "requirements.txt").write_text(f"torch{floor}\nnumpy\n")
    (project / "README.md").write_text("```\npip install -r requirements.txt\n```\n")
    home = tmp_path / "home"
    home.mkdir()
    made = envkit("init", "--no-input", cwd=project, env={"HOME": str(home)})
    assert made.returncode == 0, made.stdout + made.stderr
    assert "uses requirements.txt (found here; the project installs it: README.md:2)" in made.stdout
    config = (project / "envkit.yaml").read_text()
    assert ('torch: "2.5.1"' in config) == locked, config  # else a release >=2.6
    assert ("uv.lock locks torch 2.5.1" in made.stdout) == locked, made.stdout


def test_init_proposes_the_project_with_its_locked_torch_and_it_renders(tmp_path: Path) -> None:
    project = tmp_path / "app"
    shutil.copytree(PROJECTS / "uvtorch", project)
    home = tmp_path / "home"
    home.mkdir()
    made = envkit("init", "--no-input", cwd=project, env={"HOME": str(home)})
    assert made.returncode == 0, made.stdout + made.stderr
    assert "uses pyproject.toml and uv.lock (found here" in made.stdout
    assert "torch from uv.lock locks torch 2.5.1" in made.stdout
    # pyproject.toml is part of what init uses, not an alternative it left
    assert "not used: pyproject.toml" not in made.stdout, made.stdout
    config = (project / "envkit.yaml").read_text()
    assert "  project: ." in config and 'torch: "2.5.1"' in config, "the lock's torch"
    rendered = envkit("render", cwd=project, env={"HOME": str(home)})
    assert rendered.returncode == 0, rendered.stdout + rendered.stderr


def test_init_reads_no_fifo_named_pyproject(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pyproject.toml")  # opening it to read would block for ever
    made = envkit("init", "--no-input", cwd=tmp_path, env={"HOME": str(tmp_path)}, timeout=60)
    assert made.returncode == 0, made.stdout + made.stderr
    assert "project: ." not in (tmp_path / "envkit.yaml").read_text()


def test_a_dependencys_problem_is_at_its_own_line_not_a_mention_above(tmp_path: Path) -> None:
    """The line of the dependency string itself, not of a description that mentions it."""
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "d"\nversion = "0.1"\ndescription = "uses torch==2.0 in anger"\n'
        'dependencies = [\n  "six",\n  "torch==2.0",\n]\n'
    )
    (tmp_path / "envkit.yaml").write_text(
        'name: p\nbase: {flavor: cuda}\ntorch: "2.4.1"\ncuda: "12.4"\n'
        'python: {version: "3.11", project: .}\nssh: {allow_no_keys: true}\n'
    )
    assert "pyproject.toml:7: torch==2.0 does not admit" in render_refused(tmp_path)


POETRY_PROJECT = """[tool.poetry]
name = "poet"
version = "0.1.0"
description = "uses numpy"
authors = ["a <a@b.c>"]

[tool.poetry.dependencies]
python = "^3.10"
numpy = "^1.24"
scipy = { version = "~1.10", optional = true }
rich = [
  {version = "^12", python = "<3.9"},
  {version = "^13", python = ">=3.9"},
]

[tool.poetry.extras]
sci = ["scipy"]

[tool.poetry.group.dev.dependencies]
pytest = "^8"
"""


def test_a_poetry_project_is_read_by_poetry_core_with_its_extras_not_its_dev_group(
    tmp_path: Path,
) -> None:
    """Issue 47: a Poetry-only pyproject.toml (no [project]) is a project: its caret, tilde and
    multiple constraints mean what Poetry says (poetry-core translates them), init proposes
    it, and its dev group is not installed."""
    project = tmp_path / "poet"
    project.mkdir()
    (project / "pyproject.toml").write_text(POETRY_PROJECT)
    home = tmp_path / "home"
    home.mkdir()
    made = envkit("init", "--no-input", cwd=project, env={"HOME": str(home)})
    assert made.returncode == 0, made.stdout + made.stderr
    assert "uses pyproject.toml (found here" in made.stdout, made.stdout
    (project / "envkit.yaml").write_text(CPU + "python:\n  project: .\n  extras: [sci]\n")
    dockerfile = _rendered(project)
    assert "'numpy<2.0,>=1.24'" in dockerfile
    assert "'scipy<1.11,>=1.10'" in dockerfile, "the extra named in python.extras"
    assert """'rich<14,>=13; python_version >= "3.9"'""" in dockerfile
    assert "pytest" not in dockerfile, "the dev group is not the project's runtime"
    # A source the project declares is searched beside the mirror, for what names it.
    shutil.rmtree(project / ".envkit")
    text = (project / "pyproject.toml").read_text()
    text = text.replace('numpy = "^1.24"', 'numpy = { version = "^1.24", source = "lab" }')
    text += '\n[[tool.poetry.source]]\nname = "lab"\nurl = "https://pypi.lab.example/simple"\n'
    (project / "pyproject.toml").write_text(text)
    dockerfile = _rendered(project)
    assert "--extra-index-url https://pypi.lab.example/simple" in dockerfile
    assert "'numpy<2.0,>=1.24'" in dockerfile


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (
            lambda t: t.replace("[sci]", "[gpu]"),
            "pyproject.toml:16: no extra 'gpu' in [tool.poetry.extras] (it has: sci)",
        ),
        (
            lambda t: t.replace('numpy = "^1.24"', 'mylib = { path = "../mylib" }'),
            "pyproject.toml:9: mylib is taken from the path ../mylib",
        ),
        (
            lambda t: t.replace('numpy = "^1.24"', 'numpy = { version = "^1.24", source = "lab" }'),
            "pyproject.toml:9: numpy is taken from the source 'lab', which no",
        ),
    ],
    ids=["extra", "path", "undeclared-source"],
)
def test_a_poetry_entry_envkit_cannot_install_is_refused_at_its_line(
    tmp_path: Path, change: object, said: str
) -> None:
    project = tmp_path / "poet"
    project.mkdir()
    (project / "pyproject.toml").write_text(change(POETRY_PROJECT))  # type: ignore[operator]
    config = CPU + "python:\n  project: .\n  extras: [sci]\n"
    (project / "envkit.yaml").write_text(change(config))  # type: ignore[operator]
    stderr = render_refused(project)
    assert said in stderr, stderr


def test_a_uv_workspace_installs_every_members_locked_dependencies(tmp_path: Path) -> None:
    """Issue 47: a uv workspace (a root and members under packages/, locked by the real uv):
    each member's pyproject.toml is in the context where uv looks for it, and `uv export`
    writes the locked dependencies of the root and the members it reaches, as `uv sync` has
    them, the members themselves left to the workspace; member c, only behind the root's
    extra `tools`, is not installed, nor its dependency by path (a folder of the project:
    choosing the extra installs it editable at first start, as a member); init proposes it
    and says nothing of the members' files as unused."""
    project = _project(tmp_path, "uvworkspace", CPU)
    dockerfile = _rendered(project)
    for member in ("a", "b", "c"):
        copied = f'COPY ["envkit/project/packages/{member}/pyproject.toml", '
        assert copied + f'"/opt/envkit/project/packages/{member}/"]' in dockerfile
    assert "--all-packages" not in dockerfile  # the root is a package: its own reach
    assert _exported(project, dockerfile) == [
        ("colorama", "0.4.6"),  # b's, through a
        ("six", "1.17.0"),  # the root's
        ("tqdm", "4.70.1"),  # a's
    ]
    (project / "envkit.yaml").unlink()
    home = tmp_path / "home"
    home.mkdir()
    made = envkit("init", "--no-input", cwd=project, env={"HOME": str(home)})
    assert "uses pyproject.toml and uv.lock" in made.stdout, made.stdout
    assert "packages/a/pyproject.toml" not in made.stdout
    # install: editable: the members with the project, from the workspace at first start (as
    # `uv sync` has them), their build backend (hatchling) in the image.
    shutil.rmtree(project / ".envkit")
    (project / "envkit.yaml").write_text(CPU + "python:\n  project: .\n  install: editable\n")
    dockerfile = _rendered(project)
    entrypoint = (project / ".envkit" / "envkit" / "runtime" / "entrypoint.sh").read_text()
    assert "for folder in /workspace/packages/a /workspace/packages/b /workspace ;" in entrypoint
    assert "missing_requirements.py hatchling" in dockerfile
    (project / "envkit.yaml").write_text(CPU + "python:\n  project: .\n  extras: [tools]\n")
    dockerfile = _rendered(project)
    assert "--no-emit-package localdep" in dockerfile
    entrypoint = (project / ".envkit" / "envkit" / "runtime" / "entrypoint.sh").read_text()
    assert "/workspace/vendor/localdep" in entrypoint, entrypoint


PDM = """[project]
name = "app"
version = "0.1"
dependencies = ["six==1.16.0", "private-tool>=1.0"]

[[tool.pdm.source]]
name = "private"
url = "https://pypi.lab.example/simple"

[[tool.pdm.source]]
name = "wheels"
url = "https://wheels.lab.example/linux/"
type = "find_links"
"""


def test_a_pdm_projects_own_sources_are_searched_beside_the_mirror(tmp_path: Path) -> None:
    project = tmp_path / "app"
    project.mkdir()
    (project / "pyproject.toml").write_text(PDM)
    (project / "envkit.yaml").write_text(CPU + "python:\n  project: .\n")
    layer = _rendered(project).split("own package sources too", 1)[1].split("\n\n")[0]
    assert "--extra-index-url https://pypi.lab.example/simple" in layer, layer
    assert "--find-links https://wheels.lab.example/linux/" in layer
    assert "--index-url https://pypi.org/simple" in layer  # the mirror stays the first index
    assert "private-tool>=1.0" in layer

    shutil.rmtree(project / ".envkit")
    bad = PDM.replace("https://pypi.lab", "https://me:token@pypi.lab")
    bad = bad.replace('"https://wheels.lab.example/linux/"', '"http://wheels.lab.example/"')
    bad += '\n[[tool.pdm.source]]\nname = "odd"\nurl = "https://x.example/"\ntype = "mirror"\n'
    (project / "pyproject.toml").write_text(bad)
    said = render_refused(project)
    assert "pyproject.toml:8:" in said and "credentials" in said and "~/.netrc" in said, said
    assert "token" not in said and "https://***@pypi.lab.example/simple" in said
    assert "pyproject.toml:12:" in said and "over http" in said
    assert "'mirror' is not PDM's" in said


APT_TORCH = CPU + "packages:\n  apt: [python3-torch]\n"
DROP = REPO / "envkit" / "runtime" / "drop_requirements.py"


@pytest.mark.parametrize(
    ("source", "exporter", "extra"),
    [
        ("poetryproj", "--from poetry==2.2.1 --with poetry-plugin-export==1.9.0 poetry export", ""),
        ("pdmproj", "--from pdm==2.26.1 pdm export --prod", "--group colour"),
    ],
)
def test_a_poetry_or_pdm_lock_is_exported_by_its_own_tool_without_torchs_packages(
    tmp_path: Path, source: str, exporter: str, extra: str
) -> None:
    """The locks under tests/data/projects/{poetryproj,pdmproj} were made by the real Poetry
    2.2.1 and PDM 2.26.1; tests/e2e/test_byo_project.py builds both on the engine."""
    python = "  project: .\n" + ("  extras: [colour]\n" if extra else "")
    project = _project(tmp_path, source, APT_TORCH, python)
    lock = "poetry.lock" if source == "poetryproj" else "pdm.lock"
    layer = _rendered(project).split(f"The project's {lock}, exactly", 1)[1].split("\n\n")[0]
    assert "uv tool run --no-cache --no-python-downloads --index-url" in layer, layer
    assert f"--exclude-newer 2025-11-01T00:00:00Z {exporter} --format requirements" in layer
    assert extra in layer and "--require-hashes" in layer and "--no-deps" in layer
    dropped = layer.split("drop_requirements.py ", 1)[1].split(" <", 1)[0].split()
    assert {"torch", "triton", "nvidia-cublas-cu12", "sympy"} <= set(dropped), dropped
    assert not {"six", "tqdm", "colorama"} & set(dropped)  # the project's own, installed
    assert (project / ".envkit" / "envkit" / "project" / lock).read_text() == (
        PROJECTS / source / lock
    ).read_text()
    # The project's own private index serves the lock's install too (its files held to the
    # lock's hashes); PyPI, which poetryproj names as its source, is the mirror's to serve.
    assert "--extra-index-url https://pypi.org" not in layer
    shutil.rmtree(project / ".envkit")
    table = "tool.pdm.source" if source == "pdmproj" else "tool.poetry.source"
    with (project / "pyproject.toml").open("a") as handle:
        handle.write(f'\n[[{table}]]\nname = "lab"\nurl = "https://pypi.lab.example/simple"\n')
    layer = _rendered(project).split(f"The project's {lock}, exactly", 1)[1].split("\n\n")[0]
    install = layer.split("--require-hashes", 1)[1]
    assert "--extra-index-url https://pypi.lab.example/simple" in install.split(" -r ")[0]


def test_the_drop_program_removes_whole_entries_and_keeps_the_rest() -> None:
    exported = (
        "# This file is @generated by PDM.\n"
        'six==1.16.0 ; python_version >= "3.11" \\\n    --hash=sha256:aa \\\n'
        "    --hash=sha256:bb\n"
        "Torch==2.9.1 \\\n    --hash=sha256:cc\n"
        'nvidia_cublas.cu12==12.8.4.1; platform_system == "Linux" \\\n    --hash=sha256:dd\n'
        "tqdm==4.66.6 \\\n    --hash=sha256:ee\n"
    )
    done = subprocess.run(
        [sys.executable, str(DROP), "torch", "nvidia-cublas-cu12"],
        input=exported, capture_output=True, text=True, check=True,
    )  # fmt: skip
    kept = done.stdout
    assert "Torch" not in kept and "nvidia" not in kept and "sha256:cc" not in kept
    assert "sha256:dd" not in kept and "sha256:bb" in kept and "tqdm==4.66.6" in kept
    assert kept.startswith("# This file is @generated by PDM.\nsix==1.16.0")


def test_a_poetry_lock_envkit_cannot_install_exactly_is_refused_at_its_line(
    tmp_path: Path,
) -> None:
    project = _project(tmp_path, "poetryproj", TORCH)  # envkit's torch 2.5.1, the lock's 2.9.1
    _set(project, "pyproject.toml", 'torch = "2.9.1"', 'torch = "*"')  # the lock's alone decides
    said = render_refused(project)
    assert "poetry.lock:" in said and "the lock pins torch 2.9.1" in said, said
    assert "`poetry lock`" in said
    shutil.rmtree(project)
    project = _project(tmp_path, "poetryproj", APT_TORCH)
    lock = project / "poetry.lock"
    six = lock.read_text().split('name = "six"', 1)
    legacy = '[package.source]\ntype = "legacy"\nurl = "https://pypi.org/simple"'
    git = '[package.source]\ntype = "git"\nurl = "https://github.com/benjaminp/six.git"'
    text = six[0] + 'name = "six"' + six[1].replace(legacy, git, 1)
    lock.write_text(text)
    said = render_refused(project)
    assert "poetry.lock:" in said and "from git https://github.com/benjaminp/six.git" in said
    assert "(got six)" in said


def test_a_locks_companions_of_torch_come_from_the_torch_layer_at_the_locks_version() -> None:
    """A lock's torchvision (reached here through timm) is built for the lock's torch: the
    torch layer installs it from torch's index at the lock's version (a pytorch image keeps
    its own), never the lock's wheel with --no-deps over that torch; what only it needs goes
    with it, what the project needs too stays (as viqa's pdm.lock in the corpus)."""
    from envkit.plan.project.lock_graph import companion_pins, packages_by_name, reached

    def package(name: str, version: str, *needs: str) -> dict[str, object]:
        return {"name": name, "version": version, "dependencies": [{"name": n} for n in needs]}

    packages = packages_by_name(
        {
            "package": [
                package("app", "0.1", "timm", "pillow"),
                package("timm", "1.0.0", "torchvision", "torch", "pyyaml"),
                package("torchvision", "0.20.1+cu124", "torch", "pillow", "numpy"),
                package("torch", "2.5.1+cu124", "sympy"),
                *(package(n, "1.0") for n in ("pillow", "pyyaml", "numpy", "sympy")),
            ]
        }
    )
    every, kept = reached(packages, {"timm", "pillow"}, {"app"})
    assert kept == {"timm", "pillow", "pyyaml"}
    assert every - kept == {"torchvision", "torch", "numpy", "sympy"}
    assert companion_pins(packages, every) == ("torchvision==0.20.1",)


def test_a_workspace_member_not_checked_out_is_said_at_the_locks_line(tmp_path: Path) -> None:
    """prime-rl's members under deps/ are git submodules: a clone without them is told so (and
    how to check them out), not asked to point python.project elsewhere."""
    project = _project(tmp_path, "uvworkspace", CPU)
    (project / "packages" / "a" / "pyproject.toml").unlink()
    said = render_refused(project)
    assert re.search(r"uv\.lock:\d+: the workspace member packages/a has no pyproject", said), said
    assert "git submodule update --init" in said


def test_an_extra_that_names_the_projects_own_extras_is_expanded_not_fetched(
    tmp_path: Path,
) -> None:
    """torchgeo's `all = ["torchgeo[datasets,models]"]`: the project's own extras, expanded as
    pip expands them (markers carried), never `torchgeo[...]` asked of the index, which would
    install a release of the project (or another's package of its name) beside the checkout."""
    project = tmp_path / "app"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        '[project]\nname = "Geo_Lab"\nversion = "0.1"\ndependencies = ["six==1.16.0"]\n'
        "[project.optional-dependencies]\n"
        'datasets = ["h5py==3.11.0"]\nmodels = ["timm==1.0.9; python_version >= \'3.9\'"]\n'
        'all = ["geo-lab[Datasets,models]; sys_platform == \'linux\'", "geo-lab[all]"]\n'
    )
    (project / "envkit.yaml").write_text(CPU + "python:\n  project: .\n  extras: [all]\n")
    layer = _rendered(project).split("(python.project, extras all", 1)[1].split("\n\n", 1)[0]
    assert "geo-lab" not in layer.lower() and "geo_lab" not in layer.lower(), layer
    assert 'h5py==3.11.0; sys_platform == "linux"' in layer, layer
    assert 'timm==1.0.9; python_version >= "3.9" and sys_platform == "linux"' in layer, layer


FORKED_LOCK = """version = 1
requires-python = ">=3.10"
resolution-markers = ["sys_platform == 'linux'", "sys_platform != 'linux'"]

[[package]]
name = "torch"
version = "{first}"
source = {{ registry = "https://pypi.org/simple" }}
resolution-markers = ["{first_marker}"]

[[package]]
name = "torch"
version = "{second}"
source = {{ registry = "https://download.pytorch.org/whl/cu126" }}
resolution-markers = ["{second_marker}"]
"""


@pytest.mark.parametrize("linux_first", [True, False])
def test_a_lock_forked_by_platform_gives_the_linux_torch_and_its_cuda(linux_first: bool) -> None:
    """uv's PyTorch guide locks PyPI's torch off Linux and the CUDA index's on it, in an order
    of uv's: the image's torch (and CUDA) is the Linux one whichever comes first."""
    from envkit.commands.init.torch_wish import from_uv_lock
    from envkit.files import toml_loads

    linux = ("2.6.0+cu126", "sys_platform == 'linux'")
    other = ("2.6.0", "sys_platform != 'linux'")
    (first, first_marker), (second, second_marker) = (
        (linux, other) if linux_first else (other, linux)
    )
    text = FORKED_LOCK.format(
        first=first, first_marker=first_marker, second=second, second_marker=second_marker
    )
    wish = from_uv_lock(toml_loads(text), "uv.lock")
    assert wish.cuda == "12.6" and "locks torch 2.6.0+cu126" in wish.said, wish


def test_a_lock_of_a_project_whose_extra_names_itself_is_not_out_of_date(tmp_path: Path) -> None:
    """hatchling's `full = ["p[a]"]`: uv's lock flattens the project's reference to itself
    into its extras, so pyproject.toml naming p is no package the lock lacks (uv lock --check
    passes on this lock); init takes the lock and render installs it."""
    project = tmp_path / "p"
    shutil.copytree(PROJECTS / "uvselfextra", project)
    made = envkit("init", "--no-input", cwd=project, env={"HOME": str(tmp_path)})
    assert "uses pyproject.toml and uv.lock" in made.stdout, made.stdout + made.stderr
    assert "out of date" not in made.stdout, made.stdout
    rendered = envkit("render", cwd=project, env={"HOME": str(tmp_path)})
    assert rendered.returncode == 0, rendered.stdout + rendered.stderr


def test_an_extra_is_found_under_its_pep_685_name() -> None:
    """uv writes `cu128_torch271` as cu128-torch271 (PEP 685): either spelling names it."""
    from envkit.plan.project.project_requirements import project_requirements

    text = (
        '[project]\nname = "p"\nversion = "0.1"\ndependencies = ["six"]\n'
        '[project.optional-dependencies]\ncu128_torch271 = ["torch==2.7.1"]\n'
    )
    from envkit.files import toml_loads

    for extra in ("cu128-torch271", "cu128_torch271", "CU128.Torch271"):
        wanted = project_requirements("pyproject.toml", text, toml_loads(text), (extra,))
        assert wanted == ["six", "torch==2.7.1"], (extra, wanted)


def test_a_uv_projects_own_indexes_are_searched_beside_the_mirror(tmp_path: Path) -> None:
    """cosmos-predict's uv.lock takes apex and natten from its own [[tool.uv.index]]: the
    lock's install searches that index beside the mirror (a `format = "flat"` one as
    --find-links), PyTorch's index aside (torch's layer takes torch from it)."""
    project = tmp_path / "p"
    shutil.copytree(PROJECTS / "uvselfextra", project)
    with (project / "pyproject.toml").open("a") as handle:
        handle.write(
            '\n[[tool.uv.index]]\nname = "own"\nurl = "https://wheels.example.org/simple"\n'
            '\n[[tool.uv.index]]\nname = "flat"\nurl = "https://wheels.example.org/flat/"\n'
            'format = "flat"\n'
            '\n[[tool.uv.index]]\nname = "pytorch-cu128"\n'
            'url = "https://download.pytorch.org/whl/cu128"\nexplicit = true\n'
        )
    (project / "envkit.yaml").write_text(
        'name: p\nbase: {flavor: cuda}\npython: {project: ., version: "3.11"}\n'
        "ssh: {allow_no_keys: true}\n"
    )
    rendered = envkit("render", cwd=project, env={"HOME": str(tmp_path)})
    assert rendered.returncode == 0, rendered.stdout + rendered.stderr
    dockerfile = (project / ".envkit" / "Dockerfile").read_text()
    locked = next(line for line in dockerfile.splitlines() if "--require-hashes" in line)
    assert "--extra-index-url https://wheels.example.org/simple" in locked, locked
    assert "--find-links https://wheels.example.org/flat/" in locked, locked
    assert "download.pytorch.org" not in locked, locked
