"""Build costs on the real engine, side by side in one run (needs Docker and the test base image):

- cold build (--no-cache) vs warm rebuild after one pip change;
- layers rebuilt per one-line change: a pip package, an apt package, an SSH key, a mirror;
- image size vs a seed-000-style Dockerfile on the same base with the same packages.

    python benchmarks/bench_build.py [--json benchmarks/build.json]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.e2e.images import BASE_IMAGE, docker, ensure_base_image, project_config  # noqa: E402

TAG = "envkit-bench/build:latest"
SEED_TAG = "envkit-bench/seed:latest"
SEED_DOCKERFILE = f"""FROM {BASE_IMAGE}
COPY ca/ /usr/local/share/ca-certificates/
RUN update-ca-certificates
RUN apt-get update && apt-get install -y openssh-server sudo python3 python3-venv python3-torch \\
    python3-numpy python3-pytest git
RUN python3 -m venv --system-site-packages /opt/venv && /opt/venv/bin/pip install tqdm
RUN echo "PermitRootLogin yes" >> /etc/ssh/sshd_config && mkdir -p /root/.ssh && \\
    echo "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMYZoO4AcJo32+7D8n7/JRWOMEU0KB/J8w4HuJ01GVSD seed" \\
    > /root/.ssh/authorized_keys
ENTRYPOINT ["/usr/sbin/sshd", "-D"]
"""


def build(project: Path, *extra: str) -> tuple[float, list[str], int]:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "envkit", "build", "--json", "--tag", TAG, *extra],
        cwd=project,
        capture_output=True,
        text=True,
        check=True,
    )
    seconds = time.perf_counter() - start
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    steps = {e["step"]: e["instruction"] for e in events if e["event"] == "step"}
    cached = {e["step"] for e in events if e["event"] == "cached"}
    rebuilt = [steps[s] for s in sorted(steps) if s not in cached and s != 1]
    layered = [s for s in rebuilt if s.split()[0] in ("RUN", "COPY", "ADD")]
    return seconds, rebuilt, len(layered)


def edit(config: Path, old: str, new: str) -> None:
    text = config.read_text()
    assert old in text, old
    config.write_text(text.replace(old, new, 1))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    ensure_base_image()
    project = Path(tempfile.mkdtemp(prefix="envkit-bench-"))
    config = project_config(project)
    results: dict[str, Any] = {}
    cold, _, _ = build(project, "--no-cache")
    results["cold_build_s"] = round(cold, 1)
    original = config.read_text()
    changes = {
        "pip package": ("pip: [tqdm]", "pip: [tqdm, six]"),
        "apt package": ("git]", "git, tree]"),
        "ssh key": ("[id_test.pub]", "[id_test.pub, id_test.pub]"),
        "mirror (pip index)": (
            "  preset: official\n",
            "  preset: official\n  pip: https://pypi.org/simple/\n",
        ),
    }
    rows = {}
    for label, (old, new) in changes.items():
        config.write_text(original)
        build(project)  # back to the baseline, all cached
        edit(config, old, new)
        seconds, rebuilt, layers = build(project)
        rows[label] = {
            "seconds": round(seconds, 1),
            "layers_rebuilt": layers,
            "first_rebuilt_step": rebuilt[0] if rebuilt else None,
        }
    results["changes"] = rows
    results["warm_pip_rebuild_fraction_of_cold"] = round(rows["pip package"]["seconds"] / cold, 3)
    config.write_text(original)
    build(project)
    seed_dir = project / "seed"
    (seed_dir / "ca").mkdir(parents=True)
    for crt in project.glob("*.crt"):
        shutil.copy(crt, seed_dir / "ca" / crt.name)
    (seed_dir / "Dockerfile").write_text(SEED_DOCKERFILE)
    docker("build", "-t", SEED_TAG, str(seed_dir), timeout=3600)
    size = int(docker("image", "inspect", "-f", "{{.Size}}", TAG).stdout)
    seed_size = int(docker("image", "inspect", "-f", "{{.Size}}", SEED_TAG).stdout)
    base_size = int(docker("image", "inspect", "-f", "{{.Size}}", BASE_IMAGE).stdout)
    results["image_mb"] = {
        "envkit": round(size / 1e6),
        "seed_equivalent": round(seed_size / 1e6),
        "base": round(base_size / 1e6),
        "envkit_added": round((size - base_size) / 1e6),
        "seed_added": round((seed_size - base_size) / 1e6),
    }
    for tag in (TAG, SEED_TAG):
        docker("rmi", "-f", tag, check=False)
    shutil.rmtree(project, ignore_errors=True)
    print(json.dumps(results, indent=2))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
