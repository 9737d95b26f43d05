"""Pipenv's files (issue 47): a Pipfile.lock's default packages installed at their locked
versions, each checked by its sha256 (its dev packages left out), as `pipenv requirements
--hash` writes them; a Pipfile's [packages] as their specifiers; torch's lines envkit's, as
in any requirements file; init takes the lock before the project's unlocked files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.helpers import envkit, render_refused

CONFIG = "name: p\nbase: {flavor: cuda}\ntorch: '2.4.1'\ncuda: '12.4'\nssh: {allow_no_keys: true}\n"
LOCK: dict[str, Any] = {
    "_meta": {
        "sources": [
            {"name": "pypi", "url": "https://pypi.org/simple", "verify_ssl": True},
            {"name": "internal", "url": "https://pypi.example.org/simple", "verify_ssl": True},
        ]
    },
    "default": {
        "numpy": {"version": "==1.26.4", "hashes": ["sha256:" + "a" * 64, "sha256:" + "b" * 64]},
        "torch": {"version": "==2.4.1", "hashes": ["sha256:" + "c" * 64]},
        "requests": {
            "version": "==2.32.3",
            "extras": ["socks"],
            "markers": "python_version >= '3.8'",
            "hashes": ["sha256:" + "d" * 64],
        },
    },
    "develop": {"pytest": {"version": "==8.0.0", "hashes": ["sha256:" + "e" * 64]}},
}


def _project(tmp_path: Path, files: dict[str, str], requirements: str) -> Path:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "envkit.yaml").write_text(CONFIG + f"packages:\n  requirements: [{requirements}]\n")
    return tmp_path


def test_a_pipfile_lock_installs_its_default_packages_with_their_hashes(tmp_path: Path) -> None:
    project = _project(tmp_path, {"Pipfile.lock": json.dumps(LOCK, indent=4)}, "Pipfile.lock")
    done = envkit("render", cwd=project)
    assert done.returncode == 0, done.stderr
    lines = (project / ".envkit" / "envkit" / "project" / "Pipfile.lock").read_text().splitlines()
    assert f"numpy==1.26.4 --hash=sha256:{'a' * 64} --hash=sha256:{'b' * 64}" in lines
    assert f'requests[socks]==2.32.3; python_version >= "3.8" --hash=sha256:{"d" * 64}' in lines
    assert "--extra-index-url https://pypi.example.org/simple" in lines, "a source beyond PyPI"
    assert not any("pypi.org/simple" in line for line in lines), "PyPI is the mirror's"
    assert not any(line.startswith("pytest") for line in lines), "the dev packages are not"
    assert any(line.startswith("# envkit: torch==2.4.1") for line in lines), "torch is envkit's"


def test_a_pipfile_and_a_lock_with_a_git_entry(tmp_path: Path) -> None:
    """A Pipfile's [packages] as their specifiers; a lock with a git entry (which has no hash)
    is installed without hashes, said in the file, as pip checks every line or none."""
    pipfile = '[packages]\nnumpy = "*"\nscipy = ">=1.10"\nrich = {version = "==13.7.0"}\n'
    project = _project(tmp_path, {"Pipfile": pipfile}, "Pipfile")
    assert envkit("render", cwd=project).returncode == 0
    written = (project / ".envkit" / "envkit" / "project" / "Pipfile").read_text().splitlines()
    assert [w for w in written if w[0].isalpha()] == ["numpy", "rich==13.7.0", "scipy>=1.10"]
    lock = {
        **LOCK,
        "default": {
            **LOCK["default"],
            "tool": {"git": "https://github.com/a/tool.git", "ref": "0123abc"},
        },
    }
    (project / "Pipfile.lock").write_text(json.dumps(lock))
    (project / "envkit.yaml").write_text(CONFIG + "packages:\n  requirements: [Pipfile.lock]\n")
    assert envkit("render", cwd=project).returncode == 0
    text = (project / ".envkit" / "envkit" / "project" / "Pipfile.lock").read_text()
    assert "tool @ git+https://github.com/a/tool.git@0123abc" in text
    assert "--hash" not in text and "hashes left out" in text


def test_a_broken_pipfile_lock_is_refused_at_its_line_and_init_prefers_the_lock(
    tmp_path: Path,
) -> None:
    project = _project(
        tmp_path, {"Pipfile.lock": '{\n  "default": {\n    "numpy": \n'}, "Pipfile.lock"
    )
    assert "Pipfile.lock:4: not a JSON file" in render_refused(project)
    (project / "Pipfile.lock").write_text(json.dumps(LOCK))
    (project / "Pipfile").write_text('[packages]\nnumpy = "*"\n')
    (project / "requirements.txt").write_text("six\n")
    (project / "envkit.yaml").unlink()
    home = tmp_path / "home"
    home.mkdir()
    made = envkit("init", "--no-input", cwd=project, env={"HOME": str(home)})
    assert "uses Pipfile.lock (found here" in made.stdout, made.stdout
    assert "requirements: [Pipfile.lock]" in (project / "envkit.yaml").read_text()


def test_a_value_that_would_add_a_line_or_an_option_is_refused(tmp_path: Path) -> None:
    """Every field is checked as what it is: a version smuggling an --index-url on a line of
    its own, a git URL with a newline, a hash that is not one: each refused at its package."""
    hostile = {
        "default": {
            "numpy": {"version": "==1.26.0\n--index-url https://evil.example/simple"},
            "tool": {"git": "https://github.com/a/b\n-i https://evil.example"},
            "six": {"version": "==1.16.0", "hashes": ["md5:0"]},
        }
    }
    project = _project(tmp_path, {"Pipfile.lock": json.dumps(hostile, indent=2)}, "Pipfile.lock")
    said = render_refused(project)
    assert "numpy: not an entry pip can install" in said, said
    assert "tool: not an entry pip can install (a git source that is not plain https" in said
    assert "six: hashes that are not sha256:HEX" in said
    assert not (project / ".envkit").exists(), "nothing written"
