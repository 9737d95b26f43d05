"""envkit-conda: conda environments made with py-rattler, from the channels the image's .condarc
names, installed as the image's `envkit-conda`.

  envkit-conda create -p PREFIX -f environment.yml     solve and install the file's environment
                                                        (its channels first, then .condarc's),
                                                        then its pip: section with the env's pip
  envkit-conda create -p PREFIX --explicit FILE         install exactly FILE's package URLs
                [--from DIR]                            (`URL#md5` or `URL#sha256` lines), each
                                                        checked against its hash, nothing solved;
                                                        --from: the files from DIR/<subdir>/, no
                                                        network (an offline bundle's conda/)
  envkit-conda install [-p PREFIX] SPEC...              add packages to an environment; what is
                                                        installed stays unless a SPEC needs it
  envkit-conda list [-p PREFIX] [--explicit]            the environment's packages
  envkit-conda channels                                 the channel URLs .condarc gives

Why it exists, and how channel names resolve (a name .condarc does not route is refused, never
sent upstream): docs/conda.md.

Runs in the image with the bootstrap venv's Python (3.10 or newer, py-rattler, ruamel.yaml).
The default PREFIX is $CONDA_PREFIX (the image sets it to its environment).

May import: nothing of envkit (it runs inside the image): the standard library, py-rattler and
ruamel.yaml."""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

CONDARC = "/opt/conda/.condarc"
CONDARC_D = "/opt/conda/condarc.d"
CACHE = "/opt/conda/pkgs"


T = TypeVar("T")
# What the environment's torch was built against (torch_needs.py): in the image where the
# build copied envkit's programs, else beside this file (envkit's own checkout, its tests).
TORCH_NEEDS_PROGRAMS = (
    "/opt/envkit/programs/torch_needs.py",
    str(Path(__file__).with_name("torch_needs.py")),
)


class ToolError(Exception):
    """A problem the user can act on: said in one line, exit 1."""


def _yaml(path: Path) -> dict[str, Any]:
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        data = YAML(typ="safe").load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ToolError(f"cannot read {path}: {exc}") from None
    except YAMLError as exc:
        raise ToolError(f"{path} is not YAML: {exc}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ToolError(f"{path}: expected a mapping at the top")
    return data


def read_condarc() -> dict[str, Any]:
    """$CONDARC, else /opt/conda/.condarc, with condarc.d/*.yml after it (list keys joined,
    mapping keys merged), as conda reads them."""
    paths = [Path(os.environ.get("CONDARC") or CONDARC)]
    if Path(CONDARC_D).is_dir():
        paths += sorted(Path(CONDARC_D).glob("*.yml"))
    merged: dict[str, Any] = {}
    for path in paths:
        if not path.is_file():
            continue
        for key, value in _yaml(path).items():
            if isinstance(value, list) and isinstance(merged.get(key), list):
                merged[key] = [*merged[key], *(v for v in value if v not in merged[key])]
            elif isinstance(value, dict) and isinstance(merged.get(key), dict):
                merged[key] = {**merged[key], **value}
            else:
                merged[key] = value
    return merged


def channel_urls(names: list[str], rc: dict[str, Any]) -> list[str]:
    """Each channel's URL, in order, as conda resolves its name; `nodefaults` dropped."""
    custom = rc.get("custom_channels") or {}
    alias = str(rc.get("channel_alias") or "").rstrip("/")
    urls: list[str] = []
    for name in names:
        if name == "nodefaults":
            continue
        if name == "defaults" and rc.get("default_channels"):
            found = [str(u) for u in rc["default_channels"]]
        elif "://" in name:
            found = [name]
        elif name in custom:
            found = [f"{str(custom[name]).rstrip('/')}/{name}"]
        elif alias and name != "defaults":
            found = [f"{alias}/{name}"]
        else:
            missing = "default_channels" if name == "defaults" else "custom_channels entry"
            raise ToolError(
                f"channel {name!r} does not go through the mirror: .condarc has no {missing} "
                "(nor channel_alias) for it: fix: route it in envkit.yaml's mirrors, or give "
                "the channel's full URL"
            )
        urls += [url.rstrip("/") for url in found if url.rstrip("/") not in urls]
    return urls


def read_environment(path: Path) -> tuple[list[str], list[str], list[str]]:
    """(channels, conda specs, pip requirements) of an environment.yml."""
    data = _yaml(path)
    channels = [str(c) for c in data.get("channels") or []]
    specs: list[str] = []
    pip: list[str] = []
    for entry in data.get("dependencies") or []:
        if isinstance(entry, dict) and list(entry) == ["pip"]:
            pip += [str(line) for line in entry["pip"] or []]
        elif isinstance(entry, str):
            specs.append(entry)
        else:
            raise ToolError(f"{path}: a dependency is neither a spec nor a pip: list: {entry!r}")
    return channels, specs, pip


def _platforms() -> list[Any]:
    from rattler import Platform

    return [Platform.current(), "noarch"]


_GATEWAYS: list[Any] = []


def _gateway() -> Any:
    """One repodata gateway for the whole command (its cache under the package cache)."""
    from rattler import Gateway

    if not _GATEWAYS:
        _GATEWAYS.append(Gateway(cache_dir=Path(_cache_dir()) / "repodata"))
    return _GATEWAYS[0]


def _cache_dir() -> str:
    return os.environ.get("CONDA_PKGS_DIRS", "").split(",")[0] or CACHE


def routed(
    channels: list[str], specs: list[str], rc: dict[str, Any]
) -> tuple[list[str], list[str]]:
    """(the URLs of CHANNELS and of the specs' own channels, SPECS with each `channel::name`
    channel spelled as its URL through .condarc): a spec's own channel goes through the mirror
    like the channel list does."""
    urls = channel_urls(channels, rc)
    out: list[str] = []
    for spec in specs:
        channel, sep, rest = spec.partition("::")
        if sep and channel and "://" not in channel:
            url = channel_urls([channel], rc)[0]
            urls += [url] if url not in urls else []
            spec = f"{url}::{rest}"
        out.append(spec)
    return urls, out


async def _fresh_on_304(call: Callable[[], Awaitable[T]], what: str) -> T:
    """CALL; where a server answers 304 for a cached index in a form rattler cannot reuse
    (sharded repodata), once more with the repodata cache emptied."""
    for attempt in (1, 2):
        try:
            return await call()
        except Exception as exc:  # rattler's errors: unsolvable, unreachable channel, bad spec
            if attempt == 1 and "304" in str(exc):
                shutil.rmtree(Path(_cache_dir()) / "repodata", ignore_errors=True)
                _GATEWAYS.clear()
                continue
            raise ToolError(f"{what}: {exc}") from None
    raise AssertionError("unreachable")


async def solve(
    channels: list[str], specs: list[str], installed: list[Any] | None = None
) -> list[Any]:
    from rattler import Channel, VirtualPackage, VirtualPackageOverrides, solve

    if not channels:
        raise ToolError("no channel to solve from: .condarc and the file name none")
    virtual = VirtualPackage.detect(VirtualPackageOverrides.from_env())

    async def once() -> list[Any]:
        return await solve(
            sources=[Channel(url) for url in channels],
            specs=specs,
            gateway=_gateway(),
            platforms=_platforms(),
            virtual_packages=virtual,
            locked_packages=installed or None,
        )

    return await _fresh_on_304(once, f"cannot solve {' '.join(specs)} from {', '.join(channels)}")


def installed_records(prefix: Path) -> list[Any]:
    """The environment's package records (conda-meta/*.json), none for a new prefix."""
    from rattler import PrefixRecord

    return [PrefixRecord.from_path(p) for p in sorted((prefix / "conda-meta").glob("*.json"))]


async def install(records: list[Any], prefix: Path, installed: list[Any] | None = None) -> None:
    """RECORDS made the environment at PREFIX; INSTALLED is what it holds now (read here when
    the caller has not read it already)."""
    from rattler import install

    installed = installed_records(prefix) if installed is None else installed
    try:
        await install(
            records,
            target_prefix=prefix,
            cache_dir=Path(_cache_dir()),
            installed_packages=installed or None,
            show_progress=False,
        )
    except Exception as exc:  # a download, a hash or a link that failed
        raise ToolError(f"cannot install into {prefix}: {exc}") from None
    # The records are the environment's inventory: every member reads them (envkit-conda list,
    # envkit lock), though the environment itself stays root's.
    for meta in (prefix / "conda-meta").glob("*.json"):
        meta.chmod(0o644)


def torch_needs(python: Path) -> list[str]:
    """What the environment's torch, where it has one, was built against, as constraint lines
    (torch_needs.py, asked of the environment's own Python)."""
    program = next((p for p in TORCH_NEEDS_PROGRAMS if Path(p).is_file()), None)
    if program is None:  # never silently unprotected: the build copies it before this runs
        raise ToolError("envkit's torch_needs.py is missing: " + " or ".join(TORCH_NEEDS_PROGRAMS))
    done = subprocess.run([str(python), program], capture_output=True, text=True, check=False)
    return (
        [line for line in done.stdout.splitlines() if line.strip()] if done.returncode == 0 else []
    )


def run_pip(prefix: Path, requirements: list[str]) -> None:
    """The file's pip: section with the environment's own pip, which reads the image's pip.conf
    ($PIP_CONFIG_FILE) like any pip section conda runs. Where the environment already has a
    torch (the file's conda pytorch, or one its Python sees), the section keeps it and what it
    was built against (numpy's major, its CUDA libraries): a line that wants another fails here,
    pip naming both, rather than replacing them under torch."""
    python = prefix / "bin" / "python"
    keep = torch_needs(python)
    files = []
    for lines in (requirements, keep):
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as handle:
            handle.write("\n".join(lines) + "\n")
        files.append(handle.name)
    command = [str(python), "-m", "pip", "install", "-r", files[0]]
    if keep:
        print(f"envkit-conda: the pip section keeps {', '.join(keep)}", flush=True)
        command += ["-c", files[1]]
    try:
        done = subprocess.run(command, check=False)
    finally:
        for name in files:
            os.unlink(name)
    if done.returncode != 0:
        raise ToolError(f"the environment's pip: section failed (pip exit {done.returncode})")


async def create(prefix: Path, environment: Path) -> None:
    channels, specs, pip = read_environment(environment)
    rc = read_condarc()
    urls, specs = routed([*channels, *(rc.get("channels") or [])], specs, rc)
    print(f"envkit-conda: solving {len(specs)} specs from {', '.join(urls)}", flush=True)
    records = await solve(urls, specs)
    await install(records, prefix)
    print(f"envkit-conda: {len(records)} packages in {prefix}", flush=True)
    if pip:
        run_pip(prefix, pip)


def _explicit_lines(path: Path) -> list[tuple[str, str]]:
    """(URL, hash) of each package line of an explicit file; a line without a hash is refused,
    since nothing would check what was downloaded."""
    lines: list[tuple[str, str]] = []
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith(("#", "@")):
            continue
        url, sep, digest = line.partition("#")
        if not sep or len(digest) not in (32, 64):
            raise ToolError(f"{path}:{number}: {line!r} has no #md5 or #sha256: fix: relock")
        lines.append((url, digest.lower()))
    return lines


async def create_explicit(prefix: Path, path: Path) -> None:
    """Exactly the file's packages: each URL's record from its channel's repodata, its hash
    compared with the line's before anything is installed (and rattler checks the download)."""
    from rattler import Channel

    wanted = _explicit_lines(path)
    by_channel: dict[str, list[str]] = {}
    for url, _ in wanted:
        base, _, file_name = url.rpartition("/")
        channel = base.rpartition("/")[0]
        by_channel.setdefault(channel, []).append(file_name)
    names = {
        file_name.rsplit("-", 2)[0] for url, _ in wanted for file_name in [url.rsplit("/")[-1]]
    }
    found: dict[str, Any] = {}
    for channel in by_channel:

        async def query(channel: str = channel) -> Any:
            return await _gateway().query(
                [Channel(channel)], _platforms(), sorted(names), recursive=False
            )

        for subdir_records in await _fresh_on_304(query, f"cannot read {channel}'s index"):
            for record in subdir_records:
                found[str(record.url)] = record
    records = []
    for url, digest in wanted:
        record = found.get(url)
        if record is None:
            raise ToolError(f"{path}: {url} is not in its channel's index: fix: relock")
        have = (record.sha256 if len(digest) == 64 else record.md5) or b""
        if have.hex() != digest:
            raise ToolError(f"{path}: {url}: the channel's hash {have.hex()} is not the lock's")
        records.append(record)
    await install(records, prefix)
    print(f"envkit-conda: {len(records)} locked packages in {prefix}", flush=True)


def _held_to(local: Path, digest: str, url: str) -> None:
    """LOCAL is the file the line names: its md5 or sha256 is the line's."""
    summed = hashlib.new("sha256" if len(digest) == 64 else "md5")
    with local.open("rb") as handle:
        while block := handle.read(1 << 20):  # a CUDA package is a GB: never whole in memory
            summed.update(block)
    if summed.hexdigest() != digest:
        raise ToolError(f"{local} is not {url}: its hash differs from the lock's")


async def create_from_files(prefix: Path, path: Path, folder: Path) -> None:
    """Exactly the explicit file's packages from FOLDER's copies (laid out <subdir>/<file>, as
    an offline bundle's conda/ is), nothing fetched: each copy held to its line's hash, then
    installed and recorded as fetched from the line's URL (the same bytes), so that the
    environment's lock is the one it was made from."""
    from rattler import PrefixRecord, RepoDataRecord

    records, urls = [], {}
    for url, digest in _explicit_lines(path):
        channel, subdir, file_name = url.rsplit("/", 2)
        local = folder / subdir / file_name
        if not local.is_file():
            raise ToolError(f"{folder} holds no {subdir}/{file_name} ({url}): fix: bundle again")
        _held_to(local, digest, url)
        record = await RepoDataRecord.from_package_archive(local)
        record.channel = f"{channel}/"
        if len(digest) == 32:  # the archive gives its sha256; the lock's md5 goes with it
            record.md5 = bytes.fromhex(digest)
        records.append(record)
        urls[file_name] = url
    await install(records, prefix)
    for meta in (prefix / "conda-meta").glob("*.json"):
        installed = PrefixRecord.from_path(meta)
        if installed.file_name in urls:
            installed.url = urls[installed.file_name]
            installed.write_to_path(meta, pretty=True)
    print(f"envkit-conda: {len(records)} locked packages in {prefix}, from {folder}", flush=True)


async def add(prefix: Path, specs: list[str]) -> None:
    """SPECS added to the environment. Every installed package stays requested (by name) and
    is preferred at its installed version, so only what SPECS need changes; rattler's install
    removes whatever the solution leaves out."""
    rc = read_condarc()
    urls, specs = routed(list(rc.get("channels") or ["conda-forge"]), specs, rc)
    installed = installed_records(prefix)
    kept = [record.name.normalized for record in installed]
    await install(await solve(urls, [*kept, *specs], installed), prefix, installed)


def packages(prefix: Path) -> list[dict[str, Any]]:
    rows = []
    for meta in sorted((prefix / "conda-meta").glob("*.json")):
        try:
            rows.append(json.loads(meta.read_text(encoding="utf-8")))
        except (OSError, ValueError) as exc:
            raise ToolError(f"cannot read {meta}: {exc}") from None
    return rows


def show(prefix: Path, explicit: bool) -> None:
    rows = packages(prefix)
    if explicit:
        print("@EXPLICIT")
        for row in rows:
            print(f"{row.get('url')}#{row.get('sha256') or row.get('md5') or ''}")
        return
    for row in rows:
        channel = str(row.get("channel") or "").rstrip("/")
        print(f"{row['name']:<28} {row['version']:<16} {row['build']:<24} {channel}")


def _prefix(value: str | None) -> Path:
    chosen = value or os.environ.get("CONDA_PREFIX")
    if not chosen:
        raise ToolError("which environment? give -p PREFIX (or set CONDA_PREFIX)")
    return Path(chosen)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="envkit-conda", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    make = commands.add_parser("create", help="make an environment from a file")
    make.add_argument("-p", "--prefix")
    source = make.add_mutually_exclusive_group(required=True)
    source.add_argument("-f", "--file", type=Path)
    source.add_argument("--explicit", type=Path)
    make.add_argument("--from", dest="files", type=Path, help="--explicit's files, from here")
    more = commands.add_parser("install", help="add packages to an environment")
    more.add_argument("-p", "--prefix")
    more.add_argument("specs", nargs="+")
    listing = commands.add_parser("list", help="the environment's packages")
    listing.add_argument("-p", "--prefix")
    listing.add_argument("--explicit", action="store_true")
    commands.add_parser("channels", help="the channel URLs .condarc gives")
    return parser


async def _run(args: argparse.Namespace) -> None:
    if args.command == "create":
        prefix = _prefix(args.prefix)
        if args.files and not args.explicit:
            raise ToolError("--from gives --explicit's files: give --explicit FILE too")
        if args.files:
            await create_from_files(prefix, args.explicit, args.files)
        elif args.explicit:
            await create_explicit(prefix, args.explicit)
        else:
            await create(prefix, args.file)
    elif args.command == "install":
        await add(_prefix(args.prefix), args.specs)
    elif args.command == "list":
        show(_prefix(args.prefix), args.explicit)
    else:
        rc = read_condarc()
        print("\n".join(channel_urls(list(rc.get("channels") or []), rc)))


def main(argv: list[str] | None = None) -> int:
    """One event loop for the whole command: py-rattler's runtime threads outlive a second
    asyncio.run and crash the interpreter at exit."""
    args = _parser().parse_args(argv)
    try:
        asyncio.run(_run(args))
    except ToolError as exc:
        print(f"envkit-conda: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    # py-rattler's runtime threads can still hold the interpreter when it finalizes, and crash
    # it (a build step would fail on a finished install): nothing is left to clean up here.
    os._exit(code)
