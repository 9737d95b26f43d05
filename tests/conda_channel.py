"""A conda channel of the tests' own, served on loopback as if it were a mirror's copy of
conda-forge: no conda channel answers from the machines the tests run on.

Its packages are real conda packages (made with conda-package-handling, indexed by py-rattler's
indexer, the one pixi's and rattler-build's channels use), installed by a real solver:
- `python` 3.11.2, build `envkit_shim`: the stand-in for conda-forge's interpreter. It carries no
  interpreter of its own: its bin/python3.11 is a link to the image's /usr/bin/python3.11 and a
  pyvenv.cfg beside it makes the prefix a virtual environment of that Python (with the system's
  packages, so Debian's torch stays importable). Named as a stand-in in every test using it.
- `pip`: PyPI's real pip wheel, repackaged the way conda-forge packages a noarch Python package
  (site-packages/, an entry point for bin/pip).
- `envkit-hello`: a noarch Python package whose module says where it came from.
- `envkit-data`: a package of plain files (share/envkit-data/served.txt).

The server records every path it answers (the proof that the build used this channel), and
never answers 304: each request gets the file."""

from __future__ import annotations

import asyncio
import hashlib
import http.server
import json
import shutil
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from tests.e2e.mirrors import PROBE, Recorder, probe_wheel, serve

SHIM_PYTHON = "3.11.2"  # Debian bookworm's python3.11, which the shim links to
HELLO = "hello from the envkit test channel"


def _package(
    channel: Path,
    index: Mapping[str, object],
    files: dict[str, bytes],
    links: dict[str, str] | None = None,
    link_json: dict[str, object] | None = None,
) -> Path:
    """One .conda file in CHANNEL/<subdir>/ from FILES (relative path → bytes) and LINKS."""
    from conda_package_handling import api  # type: ignore[import-untyped]

    name, version, build = index["name"], index["version"], index["build"]
    work = channel.parent / "work" / f"{name}-{version}-{build}"
    shutil.rmtree(work, ignore_errors=True)
    (work / "info").mkdir(parents=True)
    paths = []
    for rel, data in sorted(files.items()):
        target = work / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        digest = hashlib.sha256(data).hexdigest()
        paths.append(
            {"_path": rel, "path_type": "hardlink", "sha256": digest, "size_in_bytes": len(data)}
        )
    for rel, pointee in sorted((links or {}).items()):
        target = work / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(pointee)
        paths.append({"_path": rel, "path_type": "softlink"})
    full: dict[str, object] = {"build_number": 0, "depends": [], "license": "MIT"}
    full.update({"timestamp": 1_700_000_000_000, **index})
    (work / "info" / "index.json").write_text(json.dumps(full))
    (work / "info" / "paths.json").write_text(json.dumps({"paths": paths, "paths_version": 1}))
    (work / "info" / "files").write_text("".join(f"{p['_path']}\n" for p in paths))
    if link_json is not None:
        (work / "info" / "link.json").write_text(json.dumps(link_json))
    subdir = channel / str(full["subdir"])
    subdir.mkdir(parents=True, exist_ok=True)
    members = [str(p.relative_to(work)) for p in work.rglob("*") if p.is_file() or p.is_symlink()]
    file_name = f"{name}-{version}-{build}.conda"
    api.create(str(work), members, file_name, out_folder=str(subdir))
    return subdir / file_name


def _noarch_python(
    channel: Path,
    name: str,
    version: str,
    files: dict[str, bytes],
    entry_points: list[str] = [],  # noqa: B006 - never mutated
    depends: tuple[str, ...] = (),
) -> Path:
    index = {
        "name": name,
        "version": version,
        "build": "pyh_0",
        "subdir": "noarch",
        "noarch": "python",
        "depends": ["python >=3.8", *depends],
    }
    link = {
        "noarch": {"type": "python", "entry_points": entry_points},
        "package_metadata_version": 1,
    }
    return _package(channel, index, {f"site-packages/{k}": v for k, v in files.items()}, None, link)


def _pip_wheel(folder: Path) -> Path:
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q",
         "-d", str(folder), "pip==24.3.1"],
        check=True,
    )  # fmt: skip
    return next(folder.glob("pip-*.whl"))


def _pip_package(channel: Path, wheel: Path) -> Path:
    """PyPI's pip wheel as conda-forge ships pip: the wheel's files under site-packages/ (its
    RECORD and INSTALLER rewritten as conda's installer leaves them) and bin/pip as an entry
    point."""
    with zipfile.ZipFile(wheel) as archive:
        files = {
            name: archive.read(name)
            for name in archive.namelist()
            if not name.endswith("/") and not name.endswith("dist-info/RECORD")
        }
    info = next(n.split("/")[0] for n in files if n.endswith(".dist-info/METADATA"))
    files[f"{info}/INSTALLER"] = b"conda\n"
    version = info.removeprefix("pip-").removesuffix(".dist-info")
    entry = ["pip = pip._internal.cli.main:main", "pip3 = pip._internal.cli.main:main"]
    return _noarch_python(channel, "pip", version, files, entry)


def make_channel(root: Path, platform: str = "linux-64", at: str = "cloud/conda-forge") -> Path:
    """The channel at ROOT/AT (a mirror's root keeps conda-forge at cloud/conda-forge and
    Anaconda's main at pkgs/main), indexed; returns its folder."""
    from rattler.index import index_fs

    channel = root / at
    arch = {"linux-64": "x86_64", "linux-aarch64": "aarch64"}[platform]
    shim = {
        "name": "python",
        "version": SHIM_PYTHON,
        "build": "envkit_shim",
        "subdir": platform,
        "arch": arch,
        "platform": "linux",
    }
    cfg = f"home = /usr/bin\ninclude-system-site-packages = true\nversion = {SHIM_PYTHON}\n"
    _package(
        channel,
        shim,
        {"pyvenv.cfg": cfg.encode(), "lib/python3.11/site-packages/envkit_shim.txt": b"shim\n"},
        {
            "bin/python3.11": "/usr/bin/python3.11",
            "bin/python3": "python3.11",
            "bin/python": "python3.11",
        },
    )
    _pip_package(channel, _pip_wheel(root / "wheels"))
    _noarch_python(
        channel, "envkit-hello", "1.0", {"envkit_hello/__init__.py": f"SAYS = {HELLO!r}\n".encode()}
    )
    data = {
        "name": "envkit-data",
        "version": "2.0",
        "build": "0",
        "subdir": "noarch",
        "noarch": "generic",
    }
    _package(channel, data, {"share/envkit-data/served.txt": b"served by the test channel\n"})
    (channel / platform).mkdir(exist_ok=True)
    # Plain repodata.json, as the mirrors serve conda-forge (no shards).
    asyncio.run(index_fs(channel, write_zst=False, write_shards=False))
    shutil.rmtree(channel.parent / "work", ignore_errors=True)
    return channel


class _Channel(http.server.BaseHTTPRequestHandler):
    root: Path
    recorder: Recorder
    mbps: float | None = None  # a remote mirror's pace (the benchmark's); None: loopback's

    def do_GET(self) -> None:
        self.recorder.add(self.path)
        relative = self.path.split("?")[0].lstrip("/")
        target = (self.root / relative).resolve()
        if self.root.resolve() not in target.parents or not target.is_file():
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = target.read_bytes()
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        chunk = 65536
        for start in range(0, len(body), chunk):
            self.wfile.write(body[start : start + chunk])
            if self.mbps:
                time.sleep(chunk * 8 / (self.mbps * 1024 * 1024))

    def log_message(self, *args: object) -> None:
        return None


@contextmanager
def conda_mirror(root: Path, recorder: Recorder, mbps: float | None = None) -> Iterator[str]:
    """ROOT served at http://127.0.0.1:PORT, laid out as a mirror's root is: its channels under
    /cloud/ (mirrors.conda points here), at MBPS megabits per second where given. Yields the
    root URL."""
    facts = {"root": root, "recorder": recorder, "mbps": mbps}
    handler = type("Channel", (_Channel,), facts)
    with serve(handler) as port:
        yield f"http://127.0.0.1:{port}"


def channel_records(channel: Path, names: tuple[str, ...]) -> list[tuple[str, str, str, str]]:
    """(subdir, file, sha256, md5) of the channel's packages of NAMES."""
    found = []
    for path in sorted(channel.glob("*/*.conda")):
        if path.name.rsplit("-", 2)[0] in names:
            data = path.read_bytes()
            digests = (hashlib.sha256(data).hexdigest(), hashlib.md5(data).hexdigest())  # noqa: S324
            found.append((path.parent.name, path.name, *digests))
    return found


# pixi's PyPI entry for the tests' probe wheel, as pixi writes one for a file from PyPI (its
# URL on files.pythonhosted.org, its sha256): the build installs it by version and hash
# through the pip mirror (the tests' index serves the same bytes).
PROBE_URL = f"https://files.pythonhosted.org/packages/aa/bb/{PROBE}"


def pixi_lock(records: list[tuple[str, str, str, str]], itself: str = "") -> str:
    """A pixi.lock (version 6, as pixi 0.40+ writes) of RECORDS' conda packages and the probe
    wheel from PyPI; with ITSELF (a project name), the project's own folder as pixi locks a
    `{ path = ".", editable = true }` PyPI dependency."""
    urls = [f"https://conda.anaconda.org/conda-forge/{s}/{n}" for s, n, _, _ in records]
    text = "version: 6\nenvironments:\n  default:\n    channels:\n"
    text += "    - url: https://conda.anaconda.org/conda-forge/\n    packages:\n      linux-64:\n"
    text += "".join(f"      - conda: {url}\n" for url in urls)
    text += f"      - pypi: {PROBE_URL}\n" + ("      - pypi: .\n" if itself else "")
    text += "packages:\n"
    for url, (_, _, sha256, md5) in zip(urls, records, strict=True):
        text += f"- conda: {url}\n  sha256: {sha256}\n  md5: {md5}\n"
    probe = hashlib.sha256(probe_wheel()).hexdigest()
    text += f"- pypi: {PROBE_URL}\n  name: envkit-probe\n  version: '0.1'\n  sha256: {probe}\n"
    if itself:  # pixi's hash of a source tree is its own; envkit installs a folder unhashed
        text += f"- pypi: .\n  name: {itself}\n  version: 0.1.0\n  sha256: {'0' * 64}\n"
        text += "  requires_dist:\n  - envkit-probe\n  requires_python: '>=3.11'\n"
        text += "  editable: true\n"
    return text
