"""`envkit bundle`'s work: everything an offline site needs for this environment, in one folder.

- image.tar: the image and its base as the engine saves them, their shared layers once (`docker
  load` and `podman load` read it; `build --offline` builds on that base);
- rootfs.sqfs: its root file system as SquashFS, by Charliecloud's ch-convert (what ch-run,
  enroot and Apptainer run where there is no daemon);
- wheels/: every Python package the lock pins from an index, downloaded inside the image by its
  own pip (its platform, its mirror), so a rebuild needs no network;
- conda/: every conda package the lock names, checked against the lock's md5;
- debs/: every apt package the image added to its base, at the lock's version, as a flat
  repository (its Packages index beside them) that `build --offline` points apt at;
- envkit.yaml, envkit.lock, sbom.cdx.json (the SBOM of that lock), README.md;
- MANIFEST.json last: the sha256 and size of every file (bundle/manifest.py)."""

from __future__ import annotations

import getpass
import hashlib
import io
import os
import shutil
import subprocess
import tarfile
import tempfile
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, cast

from docker.errors import ImageNotFound

from envkit.bundle.manifest import write_manifest
from envkit.checks.programs.lockfile import Lock
from envkit.checks.programs.lockstate import INDEX_INSTALLERS
from envkit.errors import EnvkitError
from envkit.lock.pins import apt_pins
from envkit.plan import Plan
from envkit.plan.image.conda_bootstrap import CONDA_TOOL_DIR, RATTLER_REQUIREMENTS, RATTLER_VENV

Say = Callable[[str], None]
# The receiving side's README, its {project} and {version} filled in; the image's own program
# that fetches the .debs (run by `sh -c`, the pins as its arguments).
README = (Path(__file__).parent / "README.bundle.md").read_text(encoding="utf-8")
DEBS = (Path(__file__).parent / "debs.sh").read_text(encoding="utf-8")


def _save_images(client: Any, tag: str, base: str, say: Say) -> Iterator[bytes]:
    """The image and its base in one archive (the engine writes each layer once), else the
    image alone where the base is gone from this engine."""
    names = [tag]
    try:
        client.images.get(base)
        names.append(base)
    except ImageNotFound:
        say(
            f"image.tar: without the base {base} (not on this engine): `build --offline` will "
            "need it loaded at the site"
        )
    api = client.api  # the SDK saves one name at a time; the engine's API takes several
    response = api._get(api._url("/images/get"), params={"names": names}, stream=True)
    api._raise_for_status(response)
    return cast("Iterator[bytes]", response.iter_content(1 << 20))


def require_tools(sif: bool, squashfs: bool = True) -> None:
    """What a bundle is made with, asked for before anything is read or written."""
    tools = [*(("ch-convert", "mksquashfs") if squashfs else ()), *(("siftool",) if sif else ())]
    if missing := [tool for tool in tools if shutil.which(tool) is None]:
        raise EnvkitError(
            f"{' and '.join(missing)} not installed: the bundle's SquashFS is made with "
            "Charliecloud's ch-convert (and wrapped as a SIF by siftool)",
            "install Debian's charliecloud, squashfs-tools (and siftool) packages",
        )


def _tool(argv: list[str], made: str, env: dict[str, str] | None = None) -> None:
    done = subprocess.run(argv, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        said = " ".join((done.stderr or done.stdout).split())[-400:]
        raise EnvkitError(f"{argv[0]} could not make {made}: {said}", "see its message")


def _in_image(plan: Plan, client: Any, run: list[str], out: Path, failed: str, fix: str) -> None:
    """RUN in PLAN's image as root, OUT bound at /envkit-out, on the network its build has;
    FAILED said with the program's own message (the SDK's ContainerError carries it)."""
    try:
        client.containers.run(
            plan.image.tag,
            run[1:],
            entrypoint=run[:1],
            user="0",
            remove=True,
            network_mode="host" if plan.runtime.build_network == "host" else None,
            volumes={str(out.resolve()): {"bind": "/envkit-out", "mode": "rw"}},
            labels={"io.envkit.throwaway": "bundle"},
        )
    except Exception as exc:
        said = " ".join(str(getattr(exc, "stderr", b"") or exc).split())[-400:]
        raise EnvkitError(f"{failed}: {said}", fix) from None


def _squashfs(client: Any, tag: str, sqfs: Path) -> None:
    """SQFS made by Charliecloud's ch-convert from TAG's file system, exported here as a plain
    tar with the image's environment as ch/environment: what its own docker input makes, less
    the gzip of the whole export it then unpacks again (minutes of CPU on a GPU image)."""
    # in the bundle's folder, whose disk holds the bundle; gone before MANIFEST.json is made
    with tempfile.TemporaryDirectory(dir=sqfs.parent, prefix=".rootfs-") as where:
        flat = Path(where) / "rootfs.tar"
        container = client.containers.create(
            tag, ["/bin/true"], labels={"io.envkit.throwaway": "bundle"}
        )
        try:
            with flat.open("wb") as handle:
                handle.writelines(container.export(chunk_size=1 << 20))
        finally:
            container.remove(force=True)
        variables = client.images.get(tag).attrs["Config"].get("Env") or ()
        environment = "".join(f"{line}\n" for line in variables).encode()
        with tarfile.open(flat, "a") as archive:
            entry = tarfile.TarInfo("ch/environment")
            entry.size, entry.mode = len(environment), 0o644
            archive.addfile(entry, io.BytesIO(environment))
        # ch-convert refuses to run without $USER
        squash = ["ch-convert", "-i", "tar", "-o", "squash", str(flat), str(sqfs)]
        _tool(squash, "rootfs.sqfs", {**os.environ, "USER": getpass.getuser()})


# siftool's --partarch numbers (its `add --help`), by dpkg architecture.
SIF_ARCH = {"386": "1", "amd64": "2", "armhf": "3", "arm64": "4", "ppc64el": "6", "s390x": "11"}


def _sif(folder: Path, arch: str) -> None:
    """rootfs.sif: the SquashFS as the SIF's primary system partition (what Apptainer runs),
    the SBOM as its SBOM object, by Debian's siftool."""
    sif = str(folder / "rootfs.sif")
    # The partition: a SquashFS (fs 1), the primary system one (type 2); group 1 for both, as
    # Apptainer's own builds have it.
    partition: tuple[str, ...] = ("--datatype", "4", "--parttype", "2", "--partfs", "1")
    partition += ("--partarch", SIF_ARCH[arch], "--groupid", "1")
    sbom = ("--datatype", "9", "--sbomformat", "cyclonedx-json", "--groupid", "1")
    _tool(["siftool", "new", sif], "rootfs.sif")
    _tool(["siftool", "add", *partition, sif, str(folder / "rootfs.sqfs")], "rootfs.sif")
    _tool(["siftool", "add", *sbom, sif, str(folder / "sbom.cdx.json")], "rootfs.sif")


def _wheels(client: Any, lock: Lock, plan: Plan, out: Path) -> int:
    """The lock's index-installed pins, and the uv that installs them, downloaded by the image's
    own pip into OUT; the conda bootstrap's own wheels by its venv's pip, by hash."""
    pins = [
        f"{name}=={values[0]}"
        for name, values in sorted(lock["pip"].items())
        if values[1] in INDEX_INSTALLERS
    ]
    # The uv that installs them (a locked build's, where pip packages are locked) or exports
    # the project's uv.lock.
    wanted = plan.bootstraps_uv or (pins and plan.install.uses_uv)
    pins += [f"uv=={plan.install.uv_version}"] if wanted else []
    rattler = plan.conda.bootstrap == "rattler"
    if not pins and not rattler:
        return 0
    out.mkdir()
    download = ("-m", "pip", "download", "--no-deps", "--quiet", "-d", "/envkit-out")
    failed = "the image's pip could not download the lock's packages"
    fix = "run `envkit bundle` where the image's pip mirror answers"
    if pins:
        python = f"{plan.python.bin_dir}/python"
        pages = [word for url in plan.packages.find_links for word in ("--find-links", url)]
        _in_image(plan, client, [python, *download, *pages, *pins], out, failed, fix)
    if rattler:
        hashed = ("--require-hashes", "-r", f"{CONDA_TOOL_DIR}/requirements.txt")
        _in_image(
            plan, client, [f"{RATTLER_VENV}/bin/python", *download, *hashed], out, failed, fix
        )
    return len(pins) + (len(RATTLER_REQUIREMENTS) if rattler else 0)


def _debs(client: Any, plan: Plan, lock: Lock, out: Path) -> int:
    """Each apt package the image added to its base, at the lock's version, into OUT."""
    pins = apt_pins(lock)
    if not pins:
        return 0
    out.mkdir()
    _in_image(
        plan,
        client,
        ["sh", "-c", DEBS, "sh", *pins],
        out,
        "the image's apt could not download the lock's packages",
        "run `envkit bundle` where the image's apt mirror answers and still has these versions "
        "(else `envkit build` and `envkit lock` again)",
    )
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
    say: Say,
    sif: bool = False,
    squashfs: bool = True,
) -> None:
    """Everything into FOLDER (new or empty); TEXTS: the small files by name (envkit.yaml,
    envkit.lock, sbom.cdx.json); with SIF, rootfs.sif too; without SQUASHFS, no rootfs.sqfs."""
    from envkit import __version__

    tag = plan.image.tag
    arch = lock["base"].get("arch", ("-",))[0]
    if sif and arch not in SIF_ARCH:
        raise EnvkitError(f"siftool names no architecture {arch!r}", "bundle without --sif")
    for name, text in texts.items():
        (folder / name).write_text(text, encoding="utf-8")
    (folder / "README.md").write_text(README.format(project=plan.project, version=__version__))
    # The downloads first: a mirror that no longer has a locked version fails them, before
    # minutes of saving and squashing.
    wheels = _wheels(client, lock, plan, folder / "wheels")
    say(f"wheels/: {wheels} Python packages")
    say(f"debs/: {_debs(client, plan, lock, folder / 'debs')} apt packages")
    _conda(lock, folder / "conda", say)
    say(f"image.tar: saving {tag} and its base")
    with (folder / "image.tar").open("wb") as handle:
        handle.writelines(_save_images(client, tag, lock["base"].get("image", ("-",))[0], say))
    if squashfs:
        say("rootfs.sqfs: its root file system, by ch-convert")
        _squashfs(client, tag, folder / "rootfs.sqfs")
    if sif:
        say("rootfs.sif: the SquashFS and the SBOM, by siftool")
        _sif(folder, arch)
    entries = write_manifest(folder, {"image": tag, "project": plan.project})
    total = sum(e.size for e in entries)
    say(f"MANIFEST.json: {len(entries)} files, {total / 1e6:.0f} MB")
