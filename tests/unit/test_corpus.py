"""Real projects' own environment files (issue 34): tests/data/corpus holds 34 public projects'
files as their teams commit them (each folder's SOURCE.md names the repository, the commit and
the licence). For every one, `envkit init --no-input` proposes a config from what it finds, and
`envkit render` of that config succeeds with the packages the chosen file names in the build.
The table in docs/project-files.md is this test's own rows: it fails when they differ."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml

from tests.helpers import REPO, envkit

CORPUS = REPO / "tests" / "data" / "corpus"
DOC = REPO / "docs" / "project-files.md"
BEGIN, END = (
    "<!-- corpus table: begin (tests/unit/test_corpus.py) -->",
    "<!-- corpus table: end -->",
)
# The ones the e2e suite builds on the real engine (CPU base), with what each shows there.
BUILT = {
    "normflows": "test_real_projects.py: requirements.txt, its torch line envkit's",
    "datasketch": "test_real_projects.py: uv.lock installed exactly, torch: none",
    "torchtools": "test_real_projects.py: its conda file, -e . at first start",
}
PROJECTS = sorted(p.name for p in CORPUS.iterdir() if p.is_dir())
TORCHES = ("torch", "pytorch", "torchvision", "torchaudio")


def _source(project: str) -> tuple[str, str]:
    text = (CORPUS / project / "SOURCE.md").read_text()
    repo = re.search(r"repo: ([\w.-]+/[\w.-]+)", text)
    commit = re.search(r"commit: ([0-9a-f]{7,40})", text)
    return (repo.group(1) if repo else "?"), (commit.group(1)[:10] if commit else "?")


def _row(project: str, tmp_path: Path) -> str:
    folder = tmp_path / project
    shutil.copytree(CORPUS / project, folder)
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    made = envkit("init", "--no-input", cwd=folder, env={"HOME": str(home)})
    assert made.returncode == 0, made.stdout + made.stderr
    rendered = envkit("render", cwd=folder, env={"HOME": str(home)})
    assert rendered.returncode == 0, rendered.stdout + rendered.stderr
    config = yaml.safe_load((folder / "envkit.yaml").read_text())
    uses = next((line[5:].split(" (found")[0] for line in made.stdout.splitlines()
                 if line.startswith("uses ") and "apt" not in line), "—")  # fmt: skip
    _packages_reach_the_build(folder, config, uses)
    left = [
        line[9:].split(":")[0] for line in made.stdout.splitlines() if line.startswith("left out ")
    ]
    torch = config.get("torch")
    proposal = f"torch {torch}" + (f", cuda {config['cuda']}" if config.get("cuda") else "")
    repo, commit = _source(project)
    built = f"built, verify passed ({BUILT[project]})" if project in BUILT else "render"
    return (
        f"| {project} | {repo} @ {commit} | {uses} | {proposal} | "
        f"{', '.join(left) or '—'} | ok | {built} |"
    )


def _packages_reach_the_build(folder: Path, config: dict, uses: str) -> None:  # type: ignore[type-arg]
    """What the chosen file names is in the rendered build: the file itself in the context
    (requirements, pyproject, uv.lock) or its dependencies in environment.yml."""
    context = folder / ".envkit"
    if uses == "—":
        return
    if uses in ("pixi.lock", "conda-lock.yml"):  # the image's platform's packages, exactly
        explicit = (context / "envkit" / "project" / "conda-explicit.txt").read_text()
        assert explicit.count("\n") > 10 and "@EXPLICIT" in explicit, explicit[:500]
        return
    if "environment" in uses or uses.startswith("conda"):
        wanted = yaml.safe_load((folder / uses).read_text())
        environment = (context / "environment.yml").read_text()
        names = [
            re.split(r"[=<>!~ ]", str(d).split("::")[-1])[0]
            for d in wanted.get("dependencies") or []
            if isinstance(d, str)
        ]
        kept = [n for n in names if n and n.lower() not in ("python", "pytorch", "torchvision",
                "torchaudio", "pytorch-cuda", "cudatoolkit", "cpuonly", "pip")]  # fmt: skip
        assert all(n in environment for n in kept), (kept, environment[:2000])
        return
    if uses == "pyproject.toml":  # its dependencies are installed from the Dockerfile itself
        from envkit.files import toml_loads

        data = toml_loads((folder / "pyproject.toml").read_text())
        dockerfile = (context / "Dockerfile").read_text()
        names = [
            re.split(r"[\s\[;<>=!~@(]", str(d), maxsplit=1)[0].lower()
            for d in data["project"].get("dependencies") or []
        ]
        missing = [n for n in names if n and n not in TORCHES and n not in dockerfile.lower()]
        assert not missing, missing
        return
    if uses == "setup.py":  # its literal install_requires, in the pip layer or torch's
        dockerfile = (context / "Dockerfile").read_text().lower()
        pip = (config.get("packages") or {}).get("pip") or []
        missing = [r for r in pip if re.split(r"[\s\[;<>=!~@(]", r, maxsplit=1)[0].lower()
                   not in dockerfile]  # fmt: skip
        assert not missing, missing
        return
    for name in uses.split(" and "):
        assert (context / "envkit" / "project" / name).is_file(), name


@pytest.fixture(scope="module")
def rows(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("corpus")
    return {project: _row(project, folder) for project in PROJECTS}


@pytest.mark.parametrize("project", PROJECTS)
def test_real_project_inits_and_renders(project: str, rows: dict[str, str]) -> None:
    assert rows[project].startswith(f"| {project} |")


def test_the_corpus_has_every_shape_and_names_its_source() -> None:
    assert len(PROJECTS) >= 12
    for project in PROJECTS:
        source = (CORPUS / project / "SOURCE.md").read_text()
        assert re.search(r"licen[cs]e: (MIT|Apache-2\.0|BSD-3-Clause)", source), project
        assert _source(project)[1] != "?", project
    shapes = {f.name for p in PROJECTS for f in (CORPUS / p).rglob("*") if f.is_file()}
    for shape in ("requirements.txt", "pyproject.toml", "uv.lock", "environment.yml",
                  "apt.txt", "setup.py", "conda-lock.yml", "pixi.lock"):  # fmt: skip
        assert shape in shapes, shape


def table(rows: dict[str, str]) -> str:
    head = (
        "| project | source | init uses | init proposes | left out (why: init's output) | "
        "render | build, verify |\n| --- | --- | --- | --- | --- | --- | --- |\n"
    )
    return f"{BEGIN}\n\n{head}" + "\n".join(rows[p] for p in PROJECTS) + f"\n\n{END}"


def test_docs_table_is_this_tests_rows(rows: dict[str, str]) -> None:
    import os

    text = DOC.read_text()
    wanted = table(rows)
    if os.environ.get("ENVKIT_REGEN_CORPUS"):
        before, _, rest = text.partition(BEGIN)
        after = rest.partition(END)[2] if rest else "\n"
        DOC.write_text(before + wanted + after if rest else text.rstrip() + "\n\n" + wanted + "\n")
        text = DOC.read_text()
    assert wanted in text, "run `ENVKIT_REGEN_CORPUS=1 pytest tests/unit/test_corpus.py`"
