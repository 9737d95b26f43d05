"""Fixtures and hooks for every test: a private history per test, a config writer, and the
Docker gate. Plain helpers are in tests/helpers.py."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def _environment_variable(name: str, value: Path) -> Iterator[Path]:
    """NAME set to VALUE while the fixture lasts, then as it was."""
    previous = os.environ.get(name)
    os.environ[name] = str(value)
    yield value
    if previous is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = previous


@pytest.fixture(autouse=True)
def _private_history(tmp_path_factory: pytest.TempPathFactory) -> object:
    """Every verify a test runs records into a history of the test's own, never the user's."""
    path = tmp_path_factory.mktemp("history") / "history.sqlite3"
    with _environment_variable("ENVKIT_HISTORY", path):
        yield path


@pytest.fixture(autouse=True)
def _private_node_state(tmp_path_factory: pytest.TempPathFactory) -> object:
    """The node's memory (the kernel log's cursor, the GPU topology baseline) is the test's
    own, never this machine's."""
    path = tmp_path_factory.mktemp("node") / "node-state.json"
    with _environment_variable("ENVKIT_NODE_STATE", path):
        yield path


@pytest.fixture(autouse=True, scope="session")
def _private_template_cache(tmp_path_factory: pytest.TempPathFactory) -> object:
    """Compiled templates are kept in the session's own cache (shared by its renders), never
    in the user's ~/.cache."""
    path = tmp_path_factory.mktemp("envkit-cache")
    with _environment_variable("ENVKIT_CACHE_DIR", path):
        yield path


@pytest.fixture
def write_config(tmp_path: Path) -> Callable[[str], Path]:
    def write(text: str) -> Path:
        path = tmp_path / "envkit.yaml"
        path.write_text(text, encoding="utf-8")
        return path

    return write


def _docker_answers() -> bool:
    if shutil.which("docker") is None:
        return False
    result = subprocess.run(
        ["docker", "info", "--format", "{{.ServerVersion}}"],
        capture_output=True,
        text=True,
        timeout=20,
        check=False,
    )
    return result.returncode == 0


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    needs_docker = [item for item in items if "docker" in item.keywords]
    if not needs_docker or _docker_answers():
        return
    if os.environ.get("ENVKIT_REQUIRE_DOCKER") == "1":
        raise pytest.UsageError(
            "ENVKIT_REQUIRE_DOCKER=1 but no Docker engine answers `docker info`: start the daemon"
        )
    skip = pytest.mark.skip(
        reason="no Docker engine answers `docker info` "
        "(set ENVKIT_REQUIRE_DOCKER=1 to fail instead)"
    )
    for item in needs_docker:
        item.add_marker(skip)
