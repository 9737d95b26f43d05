"""The arm64 build under QEMU user-mode emulation beside the native amd64 build of the same
project, on this x86 engine, one run each (needs Docker, buildx, qemu-user-static, mmdebstrap
and the test bases; the emulator is registered for the run where it was not):

- the e2e CPU project, `platforms: [linux/amd64, linux/arm64]`, its base the tests' two-platform
  index in a registry on loopback (tests/e2e/arm64.py);
- `envkit build --no-cache --platform linux/amd64`, then `--platform linux/arm64`: seconds each,
  and the ratio. BuildKit's cache mounts are pruned before each build, so neither reuses the
  other's downloads.

    python benchmarks/bench_platforms.py [--json benchmarks/platforms.json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.e2e.arm64 import ensure_arm64_base, multi_arch_base, qemu_aarch64  # noqa: E402
from tests.e2e.images import BASE_IMAGE, docker, ensure_base_image, project_config  # noqa: E402
from tests.e2e.registry import running_registry  # noqa: E402

ENVKIT = (sys.executable, "-m", "envkit")
NAME = "envkit-bench-platforms"
LOCAL = f"envkit/{NAME}:latest"


def build(project: Path, platform: str, env: dict[str, str]) -> float:
    docker("builder", "prune", "-f", "--filter", "type=exec.cachemount", check=False)
    start = time.perf_counter()
    done = subprocess.run(
        [*ENVKIT, "build", "--build", "--no-cache", "--quiet", "--platform", platform],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        said = done.stdout[-3000:] + done.stderr[-3000:]
        raise SystemExit(f"build for {platform} failed:\n{said}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="write the figures here too")
    args = parser.parse_args()
    ensure_base_image()
    with qemu_aarch64(), tempfile.TemporaryDirectory(prefix="envkit-bench-arm64-") as scratch:
        ensure_arm64_base()
        (Path(scratch) / "registry").mkdir()
        with running_registry(Path(scratch) / "registry") as registry:
            env = {**os.environ, **registry.env()}
            base = multi_arch_base(registry, registry.env())
            project = Path(scratch) / "project"
            project.mkdir()
            config = project_config(project, "platforms: [linux/amd64, linux/arm64]\n")
            text = config.read_text().replace(f"image: {BASE_IMAGE}", f"image: {base}")
            config.write_text(text.replace("name: envkit-e2e", f"name: {NAME}"))
            try:
                amd64 = build(project, "linux/amd64", env)
                arm64 = build(project, "linux/arm64", env)
            finally:
                for image in (LOCAL, f"{LOCAL}-amd64", f"{LOCAL}-arm64"):
                    docker("rmi", "-f", image, check=False)
    figures = {
        "amd64_native_s": round(amd64, 1),
        "arm64_emulated_s": round(arm64, 1),
        "ratio": round(arm64 / amd64, 2),
    }
    print(json.dumps(figures, indent=2))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
