"""The torch step of the CUDA image, uv against pip, side by side in one run.

Both commands are the ones envkit renders (the CUDA e2e project: the local Debian base, PyPI's
newest CUDA torch, its nvidia-* wheels), taken from `Dockerfile.classic` with
`build.installer: uv` and `build.installer: pip`: the classic rendering keeps no cache (uv
--no-cache, pip --no-cache-dir), so every run starts from an empty cache and downloads the same
wheels from the same index. Each runs in a fresh container from one image built up to the step
before torch (uv installed in it for both), in alternating order (pip, uv, pip, uv, ...) so that
network drift falls on both alike. The figure is the step's wall time, check included.

    python benchmarks/bench_installer.py [--rounds 2] [--json benchmarks/installer.json]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.e2e.images import (  # noqa: E402
    TEST_LABEL,
    cuda_project_config,
    docker,
    ensure_base_image,
    newest_pypi_torch,
)

PREFIX_TAG = "envkit-bench/before-torch:latest"


def render(project: Path, installer: str) -> str:
    config = project / "envkit.yaml"
    text = config.read_text()
    text = re.sub(r"\nbuild:\n  installer: \w+\n", "\n", text)
    config.write_text(text + f"build:\n  installer: {installer}\n")
    subprocess.run(
        [sys.executable, "-m", "envkit", "render", "--out", str(project / installer)],
        cwd=project,
        check=True,
        capture_output=True,
    )
    return (project / installer / "Dockerfile.classic").read_text()


def torch_step(dockerfile: str) -> tuple[str, str]:
    """(everything before the torch step, the torch step's shell command)."""
    head, _, rest = dockerfile.partition("\n# 6. torch")
    run = re.search(r"^RUN (.*?)(?<!\\)\n", rest, re.S | re.M)
    assert run, "the torch step"
    return head, run.group(1).replace("\\\n", " ")


def timed(command: str, env: dict[str, str]) -> float:
    args = ["run", "--rm", "--label", f"{TEST_LABEL}=bench", "--entrypoint", "bash"]
    for key, value in env.items():
        args += ["-e", f"{key}={value}"]
    start = time.perf_counter()
    done = docker(*args, PREFIX_TAG, "-o", "pipefail", "-c", command, check=False, timeout=3600)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"the torch step failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    ensure_base_image()
    with tempfile.TemporaryDirectory(prefix="envkit-bench-") as scratch:
        project = Path(scratch)
        cuda_project_config(project)
        steps = {kind: torch_step(render(project, kind)) for kind in ("pip", "uv")}
        # One image for both: the uv rendering's head (it has uv; pip ignores it).
        context = project / "uv"
        (context / "Dockerfile.bench").write_text(steps["uv"][0] + "\n")
        docker(
            "build", "-q", "-f", str(context / "Dockerfile.bench"), "--label",
            f"{TEST_LABEL}=bench", "-t", PREFIX_TAG, str(context), timeout=3600,
        )  # fmt: skip
        try:
            env = {"SSL_CERT_FILE": "/etc/ssl/certs/ca-certificates.crt"}
            seconds: dict[str, list[float]] = {"pip": [], "uv": []}
            for _ in range(args.rounds):
                for kind in ("pip", "uv"):
                    seconds[kind].append(round(timed(steps[kind][1], env), 1))
                    print(kind, seconds[kind][-1], file=sys.stderr)
        finally:
            docker("rmi", "-f", PREFIX_TAG, check=False)
    torch, cuda = newest_pypi_torch()
    median = {kind: statistics.median(values) for kind, values in seconds.items()}
    result = {
        "date": time.strftime("%Y-%m-%d"),
        "torch": f"{torch} (PyPI, CUDA {cuda})",
        "runs_s": seconds,
        "median_s": median,
        "uv_over_pip": round(median["uv"] / median["pip"], 2),
        "commands": {kind: step[1] for kind, step in steps.items()},
    }
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
