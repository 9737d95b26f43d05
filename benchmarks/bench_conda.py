"""The conda layer's build time, cold vs with BuildKit's cache mount, side by side in one run
(needs Docker, buildx and the test base image; no conda channel: the tests' own channel is
served on loopback as the mirror, with a 20 MB package, at a bandwidth a remote mirror gives).

- cold: BuildKit's cache mounts emptied (`docker builder prune --filter type=exec.cachemount`),
  then the image built; the conda step's seconds;
- warm: the same packages again (envkit-big named by another spec, so the step reruns), with
  the first build's packages in the `envkit-conda-pkgs` cache mount; the conda step's seconds.

Each pair is run REPEAT times, interleaved; medians and their ratio are reported.

    python benchmarks/bench_conda.py [--json benchmarks/conda.json] [--repeat 3] [--mbps 40]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.conda_channel import _package, conda_mirror, make_channel  # noqa: E402
from tests.e2e.images import copy_project, docker, ensure_base_image, project_config  # noqa: E402
from tests.e2e.mirrors import Recorder, pip_index  # noqa: E402

TAG = "envkit-bench/conda:latest"
# Each build names envkit-big by another spec that the same package meets, so the rendered
# environment.yml differs and the conda step runs again (BuildKit's --no-cache would also
# leave its cache mounts unused, which is what is measured).
ENVIRONMENT = "channels: [conda-forge]\ndependencies:\n  - python=3.11\n  - 'envkit-big{spec}'\n"
ENVKIT = (sys.executable, "-m", "envkit")


def _big_package(channel: Path) -> None:
    """A 20 MB package of incompressible bytes: what the cache mount saves is its download."""
    import asyncio
    import os

    from rattler.index import index_fs

    data = {"name": "envkit-big", "version": "1.0", "build": "0", "subdir": "noarch"}
    data["noarch"] = "generic"
    _package(channel, data, {"share/envkit-big/blob.bin": os.urandom(20 * 1024 * 1024)})
    asyncio.run(index_fs(channel, write_zst=False, write_shards=False, force=True))


def _conda_step_seconds(project: Path) -> float:
    """The conda step's seconds (it must have run, not come from the layer cache); BuildKit's
    cache mounts hold what the caller left in them."""
    done = subprocess.run(
        [*ENVKIT, "build", "--json", "--builder", "buildkit", "--tag", TAG],
        cwd=project, capture_output=True, text=True, check=False, timeout=1800,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"build failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    steps = {e["step"]: e["instruction"] for e in events if e["event"] == "step"}
    # BuildKit's progress shortens long instructions: the conda step is the one that sets
    # CONDA_PKGS_DIRS (its cache mount) after the .condarc's COPY.
    conda = [s for s, text in steps.items() if "CONDA_PKGS_DIRS=" in text and "RUN" in text]
    ended = {e["step"]: e for e in events if e["event"] == "step_done"}
    if not conda or ended[conda[0]]["cached"]:
        raise SystemExit(f"the conda step did not run: {steps} {ended}")
    return float(ended[conda[0]]["duration_s"])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--mbps", type=float, default=40.0, help="the mirror's bandwidth")
    args = parser.parse_args()
    ensure_base_image()
    cold, warm = [], []
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        base = work / "base"
        base.mkdir()
        project_config(base)
        project = work / "project"
        project.mkdir()
        config = copy_project(base, project)
        channel = make_channel(work / "mirror")
        _big_package(channel)
        mirror = conda_mirror(work / "mirror", Recorder(), args.mbps)
        with mirror as conda_url, pip_index(Recorder()) as pip_url:
            text = config.read_text().replace("  pip: [tqdm]\n", "")
            text = text.replace(
                "  preset: official\n",
                f"  preset: official\n  conda: {conda_url}\n  pip: {pip_url}/simple\n"
                "  trusted_hosts: [127.0.0.1]\n",
            ).replace("runtime:\n", "runtime:\n  build_network: host\n")
            config.write_text(text + "conda:\n  file: environment.yml\n")
            environment = project / "environment.yml"
            for round_ in range(args.repeat):
                docker("builder", "prune", "-f", "--filter", "type=exec.cachemount", check=False)
                environment.write_text(ENVIRONMENT.format(spec=f">=0.{round_}"))
                cold.append(_conda_step_seconds(project))
                environment.write_text(ENVIRONMENT.format(spec=f"<9.{round_}"))
                warm.append(_conda_step_seconds(project))
    docker("rmi", "-f", TAG, check=False)
    result: dict[str, Any] = {
        "mirror_mbps": args.mbps,
        "repeat": args.repeat,
        "cold_s": cold,
        "warm_s": warm,
        "cold_median_s": statistics.median(cold),
        "warm_median_s": statistics.median(warm),
        "ratio": statistics.median(cold) / statistics.median(warm),
    }
    print(json.dumps(result, indent=1))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
