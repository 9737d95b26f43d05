"""The NVML stand-in (tests/nvml_standin/nvml_standin.c) built with the real gcc as
libnvidia-ml.so.1, and the environment that makes envkit load it through its ordinary ctypes
path: LD_LIBRARY_PATH to its folder, NVML_STANDIN_SCENARIO to a scenario file. A stand-in for
GPU hardware that cannot exist here; every test that uses it says so in its name."""

from __future__ import annotations

import copy
import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.helpers import PLANTS_DIR, REPO

SOURCE = REPO / "tests" / "nvml_standin" / "nvml_standin.c"
SCENARIOS = REPO / "tests" / "data" / "nvml"
CACHE = Path.home() / ".cache" / "envkit-tests"
Patch = Callable[[dict[str, Any]], None]


def build_standin() -> Path:
    """The folder holding libnvidia-ml.so.1, built once per version of the source."""
    digest = hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:16]
    folder = CACHE / f"nvml-standin-{digest}"
    library = folder / "libnvidia-ml.so.1"
    if library.is_file():
        return folder
    gcc = shutil.which("gcc")
    if gcc is None:
        raise RuntimeError("gcc is needed to build the NVML stand-in: `make test` installs it")
    folder.mkdir(parents=True, exist_ok=True)
    # Each process its own partial file: parallel test workers may build it at once.
    partial = folder / f"libnvidia-ml.so.1.{os.getpid()}.partial"
    subprocess.run(
        [gcc, "-shared", "-fPIC", "-O1", "-Wall", "-Wextra", "-Werror", "-o", str(partial),
         str(SOURCE), "-lpthread"],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    partial.replace(library)
    return folder


def scenario(name: str) -> dict[str, Any]:
    """A scenario from tests/data/nvml/NAME.json, to change and write elsewhere."""
    loaded: dict[str, Any] = json.loads((SCENARIOS / f"{name}.json").read_text())
    return copy.deepcopy(loaded)


def env_for(folder: Path, scenario_file: Path) -> dict[str, str]:
    return {"LD_LIBRARY_PATH": str(folder), "NVML_STANDIN_SCENARIO": str(scenario_file)}


def checks_env(scenario_file: Path, node_state: Path) -> dict[str, str]:
    """The whole environment of a checks process (the runner, health) on the stand-in with
    SCENARIO_FILE: this process's, the stand-in loaded, the kernel log the test's own
    (kmsg_from_env), the node's memory in NODE_STATE, and the real GPU of a GPU machine hidden
    from torch (else torch would see that machine while NVML sees the scenario's; seen on an
    H200)."""
    return dict(
        os.environ, **env_for(build_standin(), scenario_file),
        ENVKIT_NODE_STATE=str(node_state), PYTHONPATH=f"{PLANTS_DIR}{os.pathsep}{REPO}",
        ENVKIT_TEST_PLANT="kmsg_from_env", CUDA_VISIBLE_DEVICES="",
    )  # fmt: skip


def statuses(report: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {c["id"]: (c["status"], c["message"]) for c in report["checks"]}


def on_every_gpu(change: Patch) -> Patch:
    def apply(world: dict[str, Any]) -> None:
        for gpu in world["gpus"]:
            change(gpu)

    return apply


def on_gpu(index: int, change: Patch) -> Patch:
    return lambda world: change(world["gpus"][index])


def world_of(base: str, *changes: Patch) -> dict[str, Any]:
    world = scenario(base)
    for change in changes:
        change(world)
    return world


def set_field(path: str, value: Any) -> Patch:
    """gpu["a"]["b"] = value for "a.b"; a numeric part indexes a list (a dict's keys are text:
    "fields.230" is the field 230)."""

    def step(node: Any, part: str) -> Any:
        return int(part) if isinstance(node, list) else part

    def change(gpu: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node: Any = gpu
        for part in parents:
            node = node[step(node, part)]
        node[step(node, last)] = value

    return change


def xid_event(code: int, after_ms: int = 30) -> Patch:
    return lambda gpu: gpu["xid_events"].append({"xid": code, "after_ms": after_ms})


def links_active(count: int) -> Patch:
    def change(gpu: dict[str, Any]) -> None:
        for n, link in enumerate(gpu["nvlink"]):
            link["state"] = 1 if n < count else 0

    return change


class StandinNode:
    """One node: its stand-in GPUs, its node state, and the health program and the runner on
    it (Debian's python3 and torch), with EXTRA in their environment (PATH, SLURM_CONF)."""

    def __init__(self, python: str, folder: Path, extra: dict[str, str]) -> None:
        self.python, self.folder, self.extra = python, folder, extra
        self.state = folder / "node-state.json"

    def env(self, world: dict[str, Any], plants: str = "") -> dict[str, str]:
        path = self.folder / "scenario.json"
        path.write_text(json.dumps(world))
        env = dict(checks_env(path, self.state), **self.extra)
        env["ENVKIT_TEST_PLANT"] = ",".join(p for p in ("kmsg_from_env", plants) if p)
        return env

    def health(self, world: dict[str, Any], *args: str) -> tuple[int, str]:
        done = subprocess.run(
            [self.python, "-m", "envkit.checks", "health", *args],
            capture_output=True, text=True, env=self.env(world), cwd=REPO, timeout=120,
            check=False,
        )  # fmt: skip
        lines = done.stdout.splitlines()
        assert len(lines) == 1, done.stdout + done.stderr  # the one line Slurm reads
        return done.returncode, lines[0]

    def run(self, world: dict[str, Any], only: list[str], plants: str) -> dict[str, Any]:
        """The runner with a 2-second burn-in (stress_s) where ONLY holds stress.gpu."""
        settings = json.dumps({"only": only, "bench": False, "stress_s": 2})
        done = subprocess.run(
            [self.python, "-m", "envkit.checks", "run", "--config", settings],
            capture_output=True, text=True, env=self.env(world, plants), cwd=REPO,
            timeout=600, check=False,
        )  # fmt: skip
        assert done.stdout, done.stderr
        return dict(json.loads(done.stdout))

    def service(self) -> dict[str, Any]:
        """The node state's record of its time out of service."""
        found: dict[str, Any] = json.loads(self.state.read_text())["service"]
        return found
