"""What is installed here, in the sections of envkit.lock: apt (dpkg's database), conda (the
prefix's conda-meta records), pip (every distribution this interpreter imports from) and the
torch stack (torch, CUDA, cuDNN, NCCL as torch reports them).

Standard library only, Python 3.8: `envkit lock` and `envkit diff` run it inside the image or
target (`python bundle.zip capture`), and the `system.lock` check runs it there too, so a lock
and the check always read the machine the same way."""

from __future__ import annotations

import contextlib
import csv
import glob
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
from typing import Dict, List, Optional, Tuple

from .lockfile import Entries, Lock, empty_lock

DPKG_FORMAT = "${Package}\t${Architecture}\t${Version}\t${db:Status-Abbrev}\n"
# RECORD rows that differ between two installs of the same files (who asked for it, by what).
# Installers that take a distribution from a pip index: what a locked build installs again from
# one (pip's own, and uv's, envkit's default installer); apt's and conda's come back with those.
INDEX_INSTALLERS = ("pip", "uv")
VOLATILE_RECORD = re.compile(r"\.dist-info/(REQUESTED|INSTALLER|direct_url\.json)$")


def normalize(name: str) -> str:
    """PEP 503: the name indexes and pip compare by."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _output(argv: List[str]) -> str:
    """What a tool prints here, its errors dropped; nothing where it is not installed."""
    if shutil.which(argv[0]) is None:
        return ""
    done = subprocess.run(
        argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, check=False
    )
    return done.stdout


def parse_dpkg(listed: str) -> Entries:
    """dpkg-query's DPKG_FORMAT lines: `name:arch` -> (version, "-") of installed packages."""
    packages: Entries = {}
    for line in listed.splitlines():
        fields = line.split("\t")
        if len(fields) == 4 and fields[3].startswith("ii"):  # installed, not half-removed
            name, arch, version = fields[:3]
            packages[f"{name}:{arch}"] = (version, "-")
    return packages


def _record_hash(dist: object) -> str:
    text = dist.read_text("RECORD") or ""  # type: ignore[attr-defined]
    rows = sorted(
        row[0]
        for row in csv.reader(io.StringIO(text))
        if row and not VOLATILE_RECORD.search(row[0])
    )
    return "record:" + hashlib.sha256("\n".join(rows).encode()).hexdigest()


def pip_packages() -> Entries:
    """The first distribution of each name on sys.path: the one `import` would load."""
    from importlib import metadata

    packages: Entries = {}
    for dist in metadata.distributions():
        name = dist.metadata["Name"]
        if not name or normalize(name) in packages:
            continue
        installer = (dist.read_text("INSTALLER") or "").strip() or "-"
        record = _record_hash(dist) if installer in INDEX_INSTALLERS else "-"
        packages[normalize(name)] = (dist.version, re.sub(r"\s+", "-", installer), record)
    return packages


def conda_packages(prefix: Optional[str]) -> Entries:
    packages: Entries = {}
    if not prefix:
        return packages
    for path in sorted(glob.glob(os.path.join(prefix, "conda-meta", "*.json"))):
        try:
            with open(path) as handle:
                meta = json.load(handle)
            name, version, build = meta["name"], meta["version"], meta["build"]
        except (OSError, ValueError, KeyError):
            continue  # not a package record (conda-meta also holds `history` and the like)
        url = meta.get("url") or "-"
        if url != "-" and meta.get("md5"):
            url = f"{url}#{meta['md5']}"
        packages[name] = (f"{version}-{build}", url)
    return packages


def torch_stack() -> Entries:
    facts: Dict[str, str] = {"torch": "-", "cuda": "-", "cudnn": "-", "nccl": "-"}
    try:
        import torch
    except Exception:  # no torch (or a broken one) is a fact of the machine, not a crash
        return {key: (value,) for key, value in facts.items()}
    facts["torch"] = str(torch.__version__)
    facts["cuda"] = str(torch.version.cuda or "-")
    with contextlib.suppress(Exception):  # cuDNN is absent from CPU builds
        facts["cudnn"] = str(torch.backends.cudnn.version() or "-")
    with contextlib.suppress(Exception):  # NCCL is absent from CPU builds
        nccl = torch.cuda.nccl.version()
        facts["nccl"] = ".".join(map(str, nccl)) if isinstance(nccl, tuple) else str(nccl)
    return {key: (value,) for key, value in facts.items()}


def capture(conda_prefix: Optional[str] = None) -> Tuple[Lock, str]:
    """This machine's installed state as lock sections, and dpkg's native architecture."""
    state = empty_lock()
    state["apt"] = parse_dpkg(_output(["dpkg-query", "-W", "-f", DPKG_FORMAT]))
    state["pip"] = pip_packages()
    state["conda"] = conda_packages(conda_prefix)
    state["torch"] = torch_stack()
    return state, _output(["dpkg", "--print-architecture"]).strip() or "-"
