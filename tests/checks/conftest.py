"""Run the real checks runner with a real torch (Debian's python3-torch on this machine), with or
without a planted breakage."""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.gpu_standin import build_standin, env_for
from tests.helpers import PLANTS_DIR, REPO

RunChecks = Callable[..., dict[str, Any]]
RunGpu = Callable[..., dict[str, Any]]


def _torch_python() -> str:
    for candidate in (os.environ.get("ENVKIT_TEST_TORCH_PYTHON"), "/usr/bin/python3"):
        if candidate and Path(candidate).is_file():
            probe = subprocess.run(
                [candidate, "-c", "import torch"], capture_output=True, check=False
            )
            if probe.returncode == 0:
                return candidate
    raise pytest.UsageError(
        "no Python with torch for the checks tests: `make test` installs Debian's python3-torch, "
        "or set ENVKIT_TEST_TORCH_PYTHON"
    )


@pytest.fixture(scope="session")
def torch_python() -> str:
    return _torch_python()


@pytest.fixture
def run_checks(torch_python: str, tmp_path: Path) -> RunChecks:
    # The node's memory (kernel-log cursor, topology baseline) is this test's own: a run never
    # judges against what another test's scenario recorded.
    state = tmp_path / "node-state.json"

    def run(
        only: list[str], plant: str | None = None, env: dict[str, str] | None = None, **config: Any
    ) -> dict[str, Any]:
        env = dict(
            os.environ,
            ENVKIT_NODE_STATE=str(state),
            **(env or {}),
            PYTHONPATH=f"{PLANTS_DIR}{os.pathsep}{REPO}",
        )
        if plant:
            env["ENVKIT_TEST_PLANT"] = plant
        settings = json.dumps({"only": only, "bench": False, **config})
        done = subprocess.run(
            [torch_python, "-m", "envkit.checks", "run", "--config", settings],
            capture_output=True,
            text=True,
            env=env,
            cwd=REPO,
            timeout=600,
            check=False,
        )
        assert done.stdout, done.stderr
        return dict(json.loads(done.stdout))

    return run


@pytest.fixture(scope="session")
def standin() -> Path:
    return build_standin()


@pytest.fixture
def run_gpu(run_checks: RunChecks, standin: Path, tmp_path: Path) -> RunGpu:
    def run(
        world: dict[str, Any], only: list[str], plant: str | None = None,
        env: dict[str, str] | None = None, **config: Any,
    ) -> dict[str, Any]:  # fmt: skip
        path = tmp_path / f"scenario-{uuid.uuid4().hex[:6]}.json"
        path.write_text(json.dumps(world))
        # The kernel log is the test's own file, never the host's (kmsg_from_env); and one
        # check runs in its turn, so the watch samples the GPUs for a while, as in a real run.
        plants = ",".join(p for p in (plant, "kmsg_from_env") if p)
        return run_checks(
            [*only, "gpu.cuda_env"], plants, env={**env_for(standin, path), **(env or {})},
            **config,
        )  # fmt: skip

    return run
