"""init never skips a file silently (issue 34): every environment file it finds is used, or
said not used with why: a second conda file or requirements file (alternatives, by
precedence), a requirements file under its own name, a setup.py, a pyproject.toml or uv.lock it
cannot read (with the setting that moves the size bound). Through `envkit init --no-input`."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import envkit


def _init(folder: Path, **env: str) -> str:
    home = folder.parent / "home"
    home.mkdir(exist_ok=True)
    made = envkit("init", "--no-input", cwd=folder, env={"HOME": str(home), **env})
    assert made.returncode == 0, made.stdout + made.stderr
    rendered = envkit("render", cwd=folder, env={"HOME": str(home)})
    assert rendered.returncode == 0, rendered.stdout + rendered.stderr
    return made.stdout


def test_every_file_found_is_used_or_said_not_used_with_why(tmp_path: Path) -> None:
    folder = tmp_path / "project"
    (folder / "binder").mkdir(parents=True)
    files = {
        "pyproject.toml": "[project\nname = 'x'\n",
        "environment.yml": "dependencies: [numpy]\n",
        "environment.yaml": "dependencies: [scipy]\n",
        "requirements.txt": "six\n",
        "binder/requirements.txt": "tqdm\n",
        "requirements-dev.txt": "pytest\n",
        "setup.py": "from setuptools import setup\nsetup(install_requires=['six'])\n",
    }
    for name, text in files.items():
        (folder / name).write_text(text)
    said = _init(folder)
    assert "uses environment.yml (found here" in said
    for alternative in ("environment.yaml", "requirements.txt", "binder/requirements.txt"):
        assert f"not used: {alternative} (an alternative:" in said, (alternative, said)
        assert "not used (" in (folder / "envkit.yaml").read_text()
    assert "not used: pyproject.toml: not valid TOML (" in said, said
    assert "not used: requirements-dev.txt: a requirements file under its own name" in said
    assert "not used: setup.py: its dependencies are decided when it runs" in said


def test_a_lock_over_the_bound_is_said_with_the_setting_that_moves_it(tmp_path: Path) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "pyproject.toml").write_text(
        '[project]\nname = "x"\nversion = "0.1"\ndependencies = ["six"]\n'
    )
    (folder / "uv.lock").write_text("version = 1\n" + "# padding\n" * 120_000)  # 1.2 MB
    said = _init(folder, ENVKIT_PROJECT_FILE_LIMIT="1")
    # the lock beside pyproject.toml is read by its build too: both said, with the setting
    assert "not used: uv.lock: uv.lock" in said, said
    left = next(line for line in said.splitlines() if line.startswith("left out pyproject.toml"))
    assert "ENVKIT_PROJECT_FILE_LIMIT=MIB moves it" in left, left
    assert "envkit.yaml:" not in left, "no place in a config that was never written"
