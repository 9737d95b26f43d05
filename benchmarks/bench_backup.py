"""Backup and restore of a member's home beside `docker cp` of the same folder (issue 35).

A volume holding a 2 GB home, as a researcher's looks: checkpoints (incompressible, 1.5 GB in
15 files) and a project tree of small text files (0.5 GB in 5,000 files). Each step runs once,
in this order, side by side on the same engine:

- backup: `envkit backup`'s own path (`write_backup`: the engine's archive stream, gzip'd,
  hashed and counted as it arrives) vs `docker cp CONTAINER:/home/alice - > file` (the same tar
  stream, written as it comes, no compression);
- restore: `restore_backup` (gunzip, stream into an empty volume) vs `docker cp - CONTAINER:/`
  of the tar `docker cp` wrote.

Every volume and container it makes carries the label io.envkit.bench=backup and is removed.

    python benchmarks/bench_backup.py [--gib 2] [--json benchmarks/backup.json]
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
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import docker  # noqa: E402

from envkit.engine.volumes import VolumeInfo  # noqa: E402
from envkit.services.backups import restore_backup, write_backup  # noqa: E402
from tests.e2e.images import BASE_IMAGE, ensure_base_image  # noqa: E402

LABEL = {"io.envkit.bench": "backup"}
FILL = r"""
set -e
mkdir -p /data/ckpt /data/src
i=0
while [ $i -lt {ckpts} ]; do
  head -c {ckpt_bytes} /dev/urandom > /data/ckpt/step-$i.pt; i=$((i+1))
done
python3 - <<'EOF'
import random
random.seed(7)
words = "def class return import self torch tensor loss grad step batch epoch".split()
line = lambda: " ".join(random.choice(words) for _ in range(12)) + "\n"
block = "".join(line() for _ in range(4000)).encode()
for n in range({texts}):
    folder = f"/data/src/pkg{{n // 100}}"
    __import__("os").makedirs(folder, exist_ok=True)
    with open(f"{{folder}}/mod{{n}}.py", "wb") as f:
        f.write((block * (({text_bytes} // len(block)) + 1))[:{text_bytes}])
EOF
chown -R 1000:1000 /data
"""


def timed(step: Any) -> float:
    start = time.monotonic()
    step()
    return time.monotonic() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gib", type=float, default=2.0)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    ensure_base_image()
    client = docker.from_env(timeout=3600)
    image = client.images.get(BASE_IMAGE)
    total = int(args.gib * (1 << 30))
    ckpt_bytes, texts = total * 3 // 4 // 15, 5000
    text_bytes = (total - ckpt_bytes * 15) // texts
    volumes = [client.volumes.create(labels=LABEL) for _ in range(3)]
    home, envkit_back, cp_back = volumes
    containers: list[Any] = []
    try:
        script = FILL.format(ckpts=15, ckpt_bytes=ckpt_bytes, texts=texts, text_bytes=text_bytes)
        client.containers.run(
            BASE_IMAGE, ["sh", "-c", script], remove=True, labels=LABEL,
            volumes={home.name: {"bind": "/data", "mode": "rw"}},
        )  # fmt: skip
        holder = client.containers.create(
            BASE_IMAGE, ["sleep", "infinity"], labels=LABEL,
            volumes={home.name: {"bind": "/home/alice", "mode": "ro"},
                     cp_back.name: {"bind": "/restored", "mode": "rw"}},
        )  # fmt: skip
        containers.append(holder)
        holder.start()
        with tempfile.TemporaryDirectory(prefix="envkit-bench-backup-", dir="/var/tmp") as tmp:
            folder = Path(tmp)
            info = VolumeInfo(name=home.name, kind="home", member="alice", size=None)
            manifests: list[Any] = []
            figures = {
                "envkit backup": timed(
                    lambda: manifests.append(
                        write_backup(client, image, info, "bench", folder / "envkit", None)
                    )
                ),
            }
            tar = folder / "cp.tar"
            with tar.open("wb") as out:
                figures["docker cp out"] = timed(
                    lambda: subprocess.run(
                        ["docker", "cp", f"{holder.id}:/home/alice", "-"], stdout=out, check=True
                    )
                )
            manifest = manifests[0]
            archive = folder / "envkit" / manifest.archive
            figures["envkit restore"] = timed(
                lambda: restore_backup(client, BASE_IMAGE, archive, envkit_back.name)
            )
            with tar.open("rb") as source:
                figures["docker cp in"] = timed(
                    lambda: subprocess.run(
                        ["docker", "cp", "-", f"{holder.id}:/restored"], stdin=source, check=True
                    )
                )
            result = {
                "home_bytes": manifest.data_bytes,
                "files": manifest.files,
                "archive_bytes": manifest.compressed_bytes,
                "cp_tar_bytes": tar.stat().st_size,
                "seconds": figures,
                "backup_ratio_to_docker_cp": figures["envkit backup"] / figures["docker cp out"],
                "restore_ratio_to_docker_cp": figures["envkit restore"] / figures["docker cp in"],
                "cpus": os.cpu_count(),
            }
    finally:
        for container in containers:
            container.remove(force=True)
        for volume in volumes:
            volume.remove(force=True)
    mb = result["home_bytes"] / 1e6
    packed = result["archive_bytes"] / 1e6
    print(f"home: {mb:.0f} MB in {result['files']} files; archive {packed:.0f} MB")
    for step, seconds in figures.items():
        print(f"{step:16} {seconds:7.1f} s  {mb / seconds:7.0f} MB/s")
    print(f"backup / docker cp: {result['backup_ratio_to_docker_cp']:.2f}x; "
          f"restore / docker cp: {result['restore_ratio_to_docker_cp']:.2f}x")  # fmt: skip
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
