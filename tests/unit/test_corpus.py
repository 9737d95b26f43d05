"""Real projects' own environment files (issue 34): tests/data/corpus holds 60-odd public projects'
files as their teams commit them (each folder's SOURCE.md names the repository, the commit and
the licence). For every one, `envkit init --no-input` proposes a config from what it finds, and
`envkit render` of that config succeeds with the packages the chosen file names in the build.
The table in docs/project-files.md is this test's own rows: it fails when they differ."""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import yaml

from envkit import cli
from tests.helpers import REPO

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
# what envkit's torch layer and base stand for in a conda file
ENVKITS = ("python", *TORCHES[1:], "pytorch-cuda", "cudatoolkit", "cuda-version", "cpuonly", "pip")


def _source(project: str) -> tuple[str, str]:
    text = (CORPUS / project / "SOURCE.md").read_text()
    repo = re.search(r"repo: ([\w.-]+/[\w.-]+)", text)
    commit = re.search(r"commit: ([0-9a-f]{7,40})", text)
    return (repo.group(1) if repo else "?"), (commit.group(1)[:10] if commit else "?")


def _cli(*args: str, cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    """envkit's own entry point in this process (the corpus is 60 projects: a process each
    would be most of this test's time), its output captured as a run's would be."""
    out, err = io.StringIO(), io.StringIO()
    before = (Path.cwd(), os.environ.get("HOME"), sys.argv)
    os.chdir(cwd)
    os.environ["HOME"], sys.argv = str(home), ["envkit", *args]
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            cli.main()
        code: object = 0
    except SystemExit as done:
        code = done.code
    finally:
        os.chdir(before[0])
        os.environ["HOME"] = before[1] or ""
        sys.argv = before[2]
    status = code if isinstance(code, int) else int(bool(code))
    return subprocess.CompletedProcess(args, status, out.getvalue(), err.getvalue())


def _row(project: str, tmp_path: Path) -> str:
    folder = tmp_path / project
    shutil.copytree(CORPUS / project, folder)
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    made = _cli("init", "--no-input", cwd=folder, home=home)
    assert made.returncode == 0, made.stdout + made.stderr
    rendered = _cli("render", cwd=folder, home=home)
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
        f"| {project} | {', '.join(sorted(_managers(project))) or 'pip'} | {repo} @ {commit} | "
        f"{uses} | {proposal} | {', '.join(left) or '—'} | ok | {built} |"
    )


def _optional(constraint: object) -> bool:
    items = constraint if isinstance(constraint, list) else [constraint]
    return all(isinstance(c, dict) and c.get("optional") for c in items)


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
    if uses.endswith((".yml", ".yaml")):  # a conda file, under any name
        wanted = yaml.safe_load((folder / uses).read_text())
        environment = (context / "environment.yml").read_text()
        names = [
            re.split(r"[=<>!~ ]", str(d).split("::")[-1])[0]
            for d in wanted.get("dependencies") or []
            if isinstance(d, str)
        ]
        kept = [n for n in names if n and n.lower() not in ENVKITS]
        assert all(n in environment for n in kept), (kept, environment[:2000])
        return
    if uses == "pyproject.toml":  # its dependencies are installed from the Dockerfile itself
        from envkit.files import toml_loads

        data = toml_loads((folder / "pyproject.toml").read_text())
        dockerfile = (context / "Dockerfile").read_text()
        poetry = data.get("tool", {}).get("poetry", {}).get("dependencies") or {}
        declared = (data.get("project") or {}).get("dependencies") or [
            n for n, c in poetry.items() if n != "python" and not _optional(c)
        ]
        names = [re.split(r"[\s\[;<>=!~@(]", str(d), maxsplit=1)[0].lower() for d in declared]
        missing = [n for n in names if n and n not in TORCHES and n not in dockerfile.lower()]
        assert not missing, missing
        return
    if uses == "setup.py":  # its literal install_requires, in the pip layer or torch's
        dockerfile = (context / "Dockerfile").read_text().lower()
        pip = (config.get("packages") or {}).get("pip") or []
        names = [re.split(r"[\s\[;<>=!~@(]", r, maxsplit=1)[0].lower() for r in pip]
        missing = [n for n in names if n not in TORCHES and n not in dockerfile]
        assert not missing, missing
        return
    for name in uses.split(" and "):
        assert (context / "envkit" / "project" / name).is_file(), name


def test_every_real_project_inits_and_renders_and_the_docs_table_is_their_rows(
    tmp_path: Path,
) -> None:
    """One test, so that one worker reads the corpus once; every project is tried and every
    failure named at once."""
    rows, failed = {}, {}
    for project in PROJECTS:
        try:
            rows[project] = _row(project, tmp_path)
        except Exception as exc:
            failed[project] = f"{type(exc).__name__}: {str(exc)[:1500]}"
    assert not failed, "\n\n".join(f"{p}: {why}" for p, why in failed.items())
    text = DOC.read_text()
    wanted = table(rows)
    if os.environ.get("ENVKIT_REGEN_CORPUS"):
        before, _, rest = text.partition(BEGIN)
        after = rest.partition(END)[2] if rest else "\n"
        DOC.write_text(before + wanted + after if rest else text.rstrip() + "\n\n" + wanted + "\n")
        text = DOC.read_text()
    assert wanted in text, "run `ENVKIT_REGEN_CORPUS=1 pytest tests/unit/test_corpus.py`"


Has = Callable[[set[str], dict[str, str]], bool]
MANAGERS: dict[
    str, Has
] = {  # each manager the corpus holds at least four projects of, by the files it leaves
    "Poetry": lambda files, text: "[tool.poetry" in text.get("pyproject.toml", ""),
    "PDM": lambda files, text: "pdm.lock" in files,
    "uv workspace": lambda files, text: "[tool.uv.workspace]" in text.get("pyproject.toml", ""),
    "pixi with PyPI": lambda files, text: "- pypi: " in text.get("pixi.lock", ""),
    "Pipenv": lambda files, text: "Pipfile" in files,
    "pip-tools": lambda files, text: any(f.endswith(".in") for f in files),
    "conda": lambda files, text: any(
        f.endswith((".yml", ".yaml")) and "\ndependencies:" in text.get(f, "") for f in files
    ),
}


def _managers(project: str) -> set[str]:
    paths = [f for f in (CORPUS / project).rglob("*") if f.is_file() and f.stat().st_size < 4e6]
    files = {f.name for f in paths}
    text: dict[str, str] = {}  # the shallowest file of each name (a workspace's root first)
    for f in sorted(paths, key=lambda f: len(f.parts)):
        if f.suffix != ".md":
            text.setdefault(f.name, f.read_text(errors="replace"))
    return {manager for manager, has in MANAGERS.items() if has(files, text)}


def test_the_corpus_has_every_shape_and_names_its_source() -> None:
    assert len(PROJECTS) >= 60
    for project in PROJECTS:
        source = (CORPUS / project / "SOURCE.md").read_text()
        assert re.search(r"licen[cs]e: (MIT|Apache-2\.0|BSD-3-Clause)", source), project
        assert _source(project)[1] != "?", project
    shapes = {f.name for p in PROJECTS for f in (CORPUS / p).rglob("*") if f.is_file()}
    for shape in ("requirements.txt", "pyproject.toml", "uv.lock", "environment.yml",
                  "apt.txt", "setup.py", "conda-lock.yml", "pixi.lock", "poetry.lock",
                  "pdm.lock", "Pipfile.lock"):  # fmt: skip
        assert shape in shapes, shape
    counts = {m: sum(m in _managers(p) for p in PROJECTS) for m in MANAGERS}
    assert all(n >= 4 for n in counts.values()), counts


def table(rows: dict[str, str]) -> str:
    by_manager = "| manager | projects |\n| --- | --- |\n" + "".join(
        f"| {m} | {sum(m in _managers(p) for p in PROJECTS)} |\n" for m in MANAGERS
    )
    head = (
        "| project | managers | source | init uses | init proposes | left out (why: init's "
        "output) | render | build, verify |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n"
    )
    body = "\n".join(rows[p] for p in PROJECTS)
    return f"{BEGIN}\n\n{by_manager}\n{head}{body}\n\n{END}"
