"""The NVML stand-in (tests/nvml_standin/nvml_standin.c) built with the real gcc as
libnvidia-ml.so.1, and the environment that makes envkit load it through its ordinary ctypes
path: LD_LIBRARY_PATH to its folder, NVML_STANDIN_SCENARIO to a scenario file. A stand-in for
GPU hardware that cannot exist here; every test that uses it says so in its name."""

from __future__ import annotations

import copy
import hashlib
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

from tests.helpers import REPO

SOURCE = REPO / "tests" / "nvml_standin" / "nvml_standin.c"
SCENARIOS = REPO / "tests" / "data" / "nvml"
CACHE = Path.home() / ".cache" / "envkit-tests"


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
    partial = folder / "libnvidia-ml.so.1.partial"
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
