"""How reproducible the CPU example's image is, as a figure: the same lock built twice (the
second with --no-cache, so nothing is reused) gives the same lock and the same SBOM, and where
the two image digests differ, `envkit diff --layers` names the layers and files that keep them
apart.

    python benchmarks/bench_reproducible.py [--json out.json]

Builds the e2e project's image, locks it, then builds from that lock twice.
"""

from __future__ import annotations

import argparse
import collections
import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
FIRST, SECOND = "envkit/bench-repro:first", "envkit/bench-repro:second"


def _envkit(project: Path, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "envkit", *args], cwd=project, capture_output=True, text=True
    )
    if done.returncode not in (0, 1):
        raise SystemExit(f"envkit {' '.join(args)}: {done.stderr[-2000:]}")
    return done.stdout


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json")
    args = parser.parse_args()
    from tests.e2e.images import ensure_base_image, project_config

    project = Path(tempfile.mkdtemp(prefix="bench-repro-"))
    project_config(project)
    ensure_base_image()
    _envkit(project, "build", "--quiet")
    _envkit(project, "lock")
    locked = ("build", "--quiet", "--locked", "--tag")
    _envkit(project, *locked, FIRST)
    _envkit(project, *locked, SECOND, "--no-cache")
    locks, sboms = [], []
    for tag in (FIRST, SECOND):
        lock = project / f"{tag.rsplit(':', 1)[1]}.lock"
        _envkit(project, "lock", "--tag", tag, "--lock-file", str(lock))
        locks.append(lock.read_bytes())
        sbom = project / f"{tag.rsplit(':', 1)[1]}.cdx.json"
        _envkit(project, "sbom", "--lock-file", str(lock), "-o", str(sbom))
        sboms.append(sbom.read_bytes())
    layers = json.loads(_envkit(project, "diff", "--layers", FIRST, SECOND, "--json"))
    total = len(
        subprocess.run(
            ["docker", "image", "inspect", "-f", "{{json .RootFS.Layers}}", FIRST],
            capture_output=True, text=True, check=True,
        ).stdout.strip().strip("[]").split(",")
    )  # fmt: skip
    kinds = collections.Counter(f["what"] for layer in layers for f in layer["files"])
    content = [f["path"] for layer in layers for f in layer["files"] if f["what"] == "content"]
    suffixes = collections.Counter(Path(path).suffix or Path(path).name for path in content)
    result = {
        "lock_identical": locks[0] == locks[1],
        "sbom_identical": sboms[0] == sboms[1],
        "layers": total,
        "layers_differing": len(layers),
        "files_differing": sum(kinds.values()),
        "by_kind": dict(kinds),
        "differing_layers": [
            {"index": x["index"], "step": x["step"], "files": len(x["files"])} for x in layers
        ],
        "content_by_suffix": dict(suffixes.most_common(12)),
        "content_sample": [path for path in content if not path.endswith(".pyc")][:20],
    }
    print(json.dumps(result, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    subprocess.run(["docker", "rmi", "-f", FIRST, SECOND], capture_output=True, check=False)


if __name__ == "__main__":
    main()
