"""`envkit bundle`'s work: everything an offline site needs for this environment, in one folder.

- image.tar: the image as the engine saves it (`docker load` and `podman load` read it);
- rootfs.sqfs: its root file system as SquashFS, by Charliecloud's ch-convert (what ch-run,
  enroot and Apptainer run where there is no daemon);
- wheels/: every Python package the lock pins from an index, downloaded inside the image by its
  own pip (its platform, its mirror), so a rebuild needs no network;
- conda/: every conda package the lock names, checked against the lock's md5;
- envkit.yaml, envkit.lock, sbom.cdx.json (the SBOM of that lock), README.md;
- MANIFEST.json last: the sha256 and size of every file (bundle/manifest.py)."""

from __future__ import annotations

import getpass
import hashlib
import os
import shutil
import subprocess
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from envkit.bundle.manifest import write_manifest
from envkit.checks.programs.lockfile import Lock
from envkit.checks.programs.lockstate import INDEX_INSTALLERS
from envkit.errors import EnvkitError
from envkit.plan import Plan

Say = Callable[[str], None]
README = """# An envkit bundle: {project}

Made by envkit {version} from envkit.yaml and envkit.lock (both here). Nothing in it needs a
network. Check it, then use what the site has:

    envkit load DIR                        # an engine (Docker, Podman): image.tar
    envkit verify --bundle DIR             # no engine: rootfs.sqfs through Charliecloud's ch-run
    ch-run DIR/rootfs.sqfs -- python3 ...  # the same image, by hand

wheels/ and conda/ hold every package the lock names; MANIFEST.json the sha256 and size of
every file (envkit refuses a bundle that differs from it); sbom.cdx.json what the image holds.
"""


def _save_image(client: Any, tag: str, out: Path) -> None:
    with out.open("wb") as handle:
        for chunk in client.images.get(tag).save(named=True):
            handle.write(chunk)


def require_tools() -> None:
    """What a bundle is made with, asked for before anything is read or written."""
    missing = [tool for tool in ("ch-convert", "mksquashfs") if shutil.which(tool) is None]
    if missing:
        raise EnvkitError(
            f"{' and '.join(missing)} not installed: the bundle's SquashFS is made with "
            "Charliecloud's ch-convert",
            "install Debian's charliecloud and squashfs-tools packages",
        )


def _squash(tag: str, out: Path) -> None:
    done = subprocess.run(
        ["ch-convert", "-i", "docker", "-o", "squash", tag, str(out)],
        capture_output=True,
        text=True,
        env={**os.environ, "USER": getpass.getuser()},  # ch-convert refuses to run without
    )
    if done.returncode != 0:
        said = " ".join((done.stderr or done.stdout).split())[-400:]
        raise EnvkitError(f"ch-convert could not make {out.name}: {said}", "see its message")


def _wheels(client: Any, tag: str, lock: Lock, python: str, out: Path) -> int:
    """The lock's index-installed pins, downloaded by the image's own pip into OUT."""
    pins = [
        f"{name}=={values[0]}"
        for name, values in sorted(lock["pip"].items())
        if values[1] in INDEX_INSTALLERS
    ]
    if not pins:
        return 0
    out.mkdir()
    argv = ["-m", "pip", "download", "--no-deps", "--quiet", "-d", "/envkit-wheels", *pins]
    try:
        client.containers.run(
            tag,
            argv,
            entrypoint=[python],
            user="0",
            remove=True,
            volumes={str(out.resolve()): {"bind": "/envkit-wheels", "mode": "rw"}},
            labels={"io.envkit.throwaway": "bundle"},
        )
    except Exception as exc:  # the SDK's ContainerError carries pip's own message
        said = " ".join(str(getattr(exc, "stderr", b"") or exc).split())[-400:]
        raise EnvkitError(
            f"the image's pip could not download the lock's packages: {said}",
            "run `envkit bundle` where the image's pip mirror answers",
        ) from None
    return len(pins)


def _conda(lock: Lock, out: Path, say: Say) -> int:
    """Each conda package the lock names, fetched and held to the lock's md5."""
    count = 0
    for name, (_, located) in sorted(lock["conda"].items()):
        url, _, md5 = located.partition("#")
        if url == "-":
            continue
        subdir, filename = url.rstrip("/").split("/")[-2:]
        target = out / subdir / filename
        target.parent.mkdir(parents=True, exist_ok=True)
        summed = hashlib.md5()  # noqa: S324 - the sum conda's lock records
        fetched = urllib.request.urlopen(url, timeout=120)  # noqa: S310 - a lock's https URL
        with fetched as response, target.open("wb") as handle:
            while block := response.read(1 << 20):  # a CUDA package is a GB: never whole in memory
                summed.update(block)
                handle.write(block)
        if md5 and summed.hexdigest() != md5:
            raise EnvkitError(
                f"{name}: {url} is not the file the lock names (its md5 differs)",
                "the channel changed a published file: `envkit lock` again, then bundle",
            )
        count += 1
    if count:
        say(f"conda/: {count} packages")
    return count


def make_bundle(
    client: Any,
    plan: Plan,
    folder: Path,
    texts: dict[str, str],
    lock: Lock,
    python: str,
    say: Say,
) -> None:
    """Everything into FOLDER (new or empty); TEXTS: the small files by name (envkit.yaml,
    envkit.lock, sbom.cdx.json)."""
    from envkit import __version__

    tag = plan.image.tag
    for name, text in texts.items():
        (folder / name).write_text(text, encoding="utf-8")
    (folder / "README.md").write_text(README.format(project=plan.project, version=__version__))
    say(f"image.tar: saving {tag}")
    _save_image(client, tag, folder / "image.tar")
    say("rootfs.sqfs: its root file system, by ch-convert")
    _squash(tag, folder / "rootfs.sqfs")
    wheels = _wheels(client, tag, lock, python, folder / "wheels")
    say(f"wheels/: {wheels} Python packages")
    _conda(lock, folder / "conda", say)
    entries = write_manifest(folder, {"image": tag, "project": plan.project})
    total = sum(e.size for e in entries)
    say(f"MANIFEST.json: {len(entries)} files, {total / 1e6:.0f} MB")
