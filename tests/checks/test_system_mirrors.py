"""system.mirrors in a Python without pip (pixi's environments install PyPI packages with
pixi's own installer, so pip is often absent): pip's index is not judged there, never failed
for a traceback and never passed on nothing read."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from envkit.checks.core.context import Context
from envkit.checks.core.contract import RunnerConfig
from envkit.checks.core.registry import Skip
from envkit.checks.suite.system import effective_pip_index, mirrors


@pytest.fixture(scope="module")
def pipless(tmp_path_factory: pytest.TempPathFactory) -> str:
    venv = tmp_path_factory.mktemp("pipless")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    return str(venv / "bin" / "python")


def test_a_python_without_pip_has_no_pip_index_and_one_with_pip_has_its_own(pipless: str) -> None:
    assert effective_pip_index(pipless) is None
    assert effective_pip_index(sys.executable)  # this venv's pip: an index, read


def test_the_pip_mirror_is_not_judged_without_pip_and_apt_alone_decides(
    pipless: str, tmp_path: Path
) -> None:
    spec = RunnerConfig(python=pipless, expected_pip_index="https://mirror.example/simple")
    with pytest.raises(Skip, match="has no pip"):
        mirrors(Context(spec))
    spec["expected_apt_any"] = ["http://nowhere.example/debian"]
    with pytest.raises(AssertionError, match="not the spec's mirror"):
        mirrors(Context(spec))  # apt is still judged, and this machine's sources are not it


def test_a_python_with_pip_on_another_index_fails(tmp_path: Path) -> None:
    spec = RunnerConfig(python=sys.executable, expected_pip_index="https://mirror.example/simple")
    with pytest.raises(AssertionError, match=r"the spec says https://mirror\.example/simple"):
        mirrors(Context(spec))
