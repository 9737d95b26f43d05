"""The project installed editable at the container's first start (`-e .` in its files, or
python.project with install: editable) builds with a backend the image already holds: its
pyproject.toml's [build-system] requires (PEP 518), or setuptools and wheel (PEP 517's default)
for a setup.py, in a layer of their own; the first start builds without isolation first, so it
asks no index. Through `envkit render`."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import envkit, render_refused

CONFIG = (
    'name: proj\nbase:\n  flavor: cuda\ntorch: "2.4.1"\ncuda: "12.4"\n'
    "ssh:\n  allow_no_keys: true\n  uid: 1000\n  gid: 1000\n"
)
REQUIREMENTS = "packages:\n  requirements: [requirements.txt]\n"
MARK = "# 9. The build backend of the project installed editable"


def _project(tmp_path: Path, files: dict[str, str], extra: str = REQUIREMENTS) -> Path:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    (tmp_path / "envkit.yaml").write_text(CONFIG + extra)
    return tmp_path


def _backend_layer(project: Path) -> str | None:
    done = envkit("render", cwd=project)
    assert done.returncode == 0, done.stdout + done.stderr
    dockerfile = (project / ".envkit" / "Dockerfile").read_text()
    if MARK not in dockerfile:
        return None
    return dockerfile.split(MARK, 1)[1].split("\n\n", 1)[0]


def test_the_pyprojects_build_backend_is_in_the_image(tmp_path: Path) -> None:
    pyproject = (
        '[build-system]\nrequires = ["hatchling>=1.18", "hatch-vcs ; python_version >= \'3.8\'",'
        ' "torch>=2.0"]\n'
        'build-backend = "hatchling.build"\n[project]\nname = "demo"\nversion = "0.1"\n'
    )
    project = _project(tmp_path, {"requirements.txt": "six\n-e .\n", "pyproject.toml": pyproject})
    layer = _backend_layer(project)
    assert layer is not None and "hatchling>=1.18" in layer, layer
    assert "'hatch-vcs; python_version >= \"3.8\"'" in layer, "the marker, quoted for the shell"
    assert "torch>=2.0" not in layer, "torch is envkit's torch layer's, never the backend's"
    # only what the environment lacks is installed: what the layers above made stays
    assert "/opt/envkit/programs/missing_requirements.py" in layer, layer
    assert "> /tmp/envkit-backend.txt" in layer, layer


@pytest.mark.parametrize(
    "files",
    [{"setup.py": "from setuptools import setup\nsetup()\n"},
     {"pyproject.toml": '[project]\nname = "demo"\nversion = "0.1"\n'}],
    ids=["setup.py", "pyproject-without-build-system"],
)  # fmt: skip
def test_a_project_without_a_build_system_table_gets_pep517s_default(
    tmp_path: Path, files: dict[str, str]
) -> None:
    project = _project(tmp_path, {"requirements.txt": "-e .\n", **files})
    layer = _backend_layer(project)
    assert layer is not None and "setuptools>=40.8.0" in layer and "wheel" in layer, layer


def test_the_conda_files_editable_line_and_python_project_editable_get_it_too(
    tmp_path: Path,
) -> None:
    pyproject = '[build-system]\nrequires = ["flit_core>=3.2,<4"]\n[project]\nname = "d"\n'
    conda = _project(
        tmp_path / "conda",
        {"environment.yml": "dependencies:\n  - pip\n  - pip:\n    - -e .\n",
         "pyproject.toml": pyproject},
        'python: "3.11"\nconda:\n  file: environment.yml\n',
    )  # fmt: skip
    assert "flit_core<4,>=3.2" in (_backend_layer(conda) or ""), "the conda file's -e ."
    pyproject += 'version = "0.1"\ndependencies = ["six"]\n'
    section = _project(
        tmp_path / "section",
        {"pyproject.toml": pyproject},
        "python:\n  version: '3.11'\n  project: .\n  install: editable\n",
    )
    assert "flit_core<4,>=3.2" in (_backend_layer(section) or "")


def test_no_editable_install_no_backend_layer(tmp_path: Path) -> None:
    pyproject = '[build-system]\nrequires = ["hatchling"]\n[project]\nname = "d"\n'
    project = _project(tmp_path, {"requirements.txt": "six\n", "pyproject.toml": pyproject})
    assert _backend_layer(project) is None


def test_a_build_system_table_that_is_not_requirements_is_refused_naming_the_file(
    tmp_path: Path,
) -> None:
    pyproject = '[build-system]\nrequires = ["hatchling", "not a requirement!!"]\n'
    project = _project(tmp_path, {"requirements.txt": "-e .\n", "pyproject.toml": pyproject})
    stderr = render_refused(project)
    assert "pyproject.toml: [build-system] requires 'not a requirement!!'" in stderr, stderr


def test_the_backend_layer_asks_only_for_what_the_environment_lacks() -> None:
    """The layer's own filter, run in this Python: a backend requirement whose project is
    installed (any version, any spelling of its name) is not asked again."""
    import subprocess
    import sys

    from envkit.runtime import missing_requirements

    asked = [
        "pytest>=99",
        "no-such-project-envkit>=1",
        "PyYAML",
        "Typing_Extensions ; python_version > '3'",
    ]
    done = subprocess.run(
        [sys.executable, missing_requirements.__file__, *asked],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.splitlines() == ["no-such-project-envkit>=1"], done.stdout
