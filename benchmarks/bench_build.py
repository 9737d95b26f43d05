"""Build costs on the real engine, both builders side by side in one run (needs Docker, buildx
and the test base image):

- per builder (classic: the docker SDK's; BuildKit: `docker buildx build`), a cold build, then
  each one-line change (a pip package, an apt package, an SSH key, the pip mirror) applied to a
  fully cached baseline and rebuilt: seconds, fraction of the cold build, layers rebuilt;
- image size vs a seed-000-style Dockerfile on the same base with the same packages.

"Cold" means nothing cached: for the classic builder `--no-cache`; for BuildKit `--no-cache` after
removing the engine's BuildKit cache mounts (`docker builder prune --filter
type=exec.cachemount`: every project's apt/uv/pip caches on this engine, not only envkit's).

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

from tests.e2e.images import (  # noqa: E402
    BASE_IMAGE,
    cuda_project_config,
    docker,
    ensure_base_image,
    project_config,
)

TAG = "envkit-bench/build:latest"
ENVKIT = (sys.executable, "-m", "envkit")
EXPORTS: list[float | None] = []  # BuildKit's "exporting layers" time of each build, in order
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


def build(project: Path, builder: str, *extra: str) -> tuple[float, list[str], int]:
    start = time.perf_counter()
    done = subprocess.run(
        [*ENVKIT, "build", "--json", "--builder", builder, "--tag", TAG, *extra],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"build failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    steps = {e["step"]: e["instruction"] for e in events if e["event"] == "step"}
    cached = {e["step"] for e in events if e["event"] == "cached"}
    rebuilt = [steps[s] for s in sorted(steps) if s not in cached and s != 1]
    layered = [s for s in rebuilt if s.split()[0] in ("RUN", "COPY", "ADD")]
    done_event: dict[str, Any] = next((e for e in events if e["event"] == "done"), {})
    EXPORTS.append(done_event.get("export_s"))
    return seconds, rebuilt, len(layered)


def forget_buildkit_caches() -> None:
    docker("builder", "prune", "-f", "--filter", "type=exec.cachemount", timeout=600)


def one_builder(
    project: Path, config: Path, builder: str, changes: dict[str, tuple[str, str]]
) -> dict[str, Any]:
    original = config.read_text()
    docker("rmi", "-f", TAG, check=False)
    if builder == "buildkit":
        forget_buildkit_caches()
    cold, _, _ = build(project, builder, "--no-cache")
    cold_export = EXPORTS[-1]
    rows = {}
    for label, (old, new) in changes.items():
        config.write_text(original)
        build(project, builder)  # back to the baseline, all cached
        edit(config, old, new)
        seconds, rebuilt, layers = build(project, builder)
        rows[label] = {
            "seconds": round(seconds, 1),
            "of_which_writing_layers_s": EXPORTS[-1],
            "fraction_of_cold": round(seconds / cold, 3),
            "layers_rebuilt": layers,
            "first_rebuilt_step": rebuilt[0] if rebuilt else None,
        }
    config.write_text(original)
    return {"cold_build_s": round(cold, 1), "cold_writing_layers_s": cold_export, "changes": rows}


SECOND_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMYZoO4AcJo32+7D8n7/JRWOMEU0KB/J8w4HuJ01GVSD seed"
PACKAGES_FOR_CUDA = "packages:\n  apt: [git, jq]\n  pip: [tqdm]\n"
CHANGES = {
    "pip package": ("pip: [tqdm]", "pip: [tqdm, six]"),
    "apt package": ("git, jq]", "git, jq, tree]"),
    "ssh key": ("[id_test.pub]", "[id_test.pub, id_test.pub]"),
    "mirror (pip index)": (
        "  preset: official\n",
        "  preset: official\n  pip: https://pypi.org/simple/\n",
    ),
}


def edit(config: Path, old: str, new: str) -> None:
    text = config.read_text()
    assert old in text, old
    config.write_text(text.replace(old, new, 1))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--project",
        choices=("cpu", "cuda"),
        default="cpu",
        help="cpu: the e2e project (Debian's torch); cuda: PyPI's CUDA torch on the same base",
    )
    args = parser.parse_args()
    ensure_base_image()
    project = Path(tempfile.mkdtemp(prefix="envkit-bench-"))
    if args.project == "cuda":
        config = cuda_project_config(project)
        # The same one-line changes need the same lines to change.
        config.write_text(config.read_text() + PACKAGES_FOR_CUDA)
    else:
        config = project_config(project)
    results: dict[str, Any] = {"date": time.strftime("%Y-%m-%d"), "project": args.project}
    changes = dict(CHANGES)
    if args.project == "cuda":
        changes["ssh key"] = ("e2e@test']", f"e2e@test', '{SECOND_KEY}']")
    for builder in ("classic", "buildkit"):
        results[builder] = one_builder(project, config, builder, changes)
    if args.project == "cuda":
        docker("rmi", "-f", TAG, check=False)
        shutil.rmtree(project, ignore_errors=True)
        report(results, args.json)
        return
    build(project, "buildkit")
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
    report(results, args.json)


def report(results: dict[str, Any], path: Path | None) -> None:
    print(json.dumps(results, indent=2))
    if path:
        path.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
