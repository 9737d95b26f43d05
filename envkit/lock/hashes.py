"""sha256 sums of the exact files a pip package version is served as, read from the index's
simple API (PEP 691 JSON where served, else the PEP 503 page's `#sha256=` fragments), so a
locked rebuild can run `pip install --require-hashes`.

Asked of the indexes the image itself used (the mirror in pip.conf, the PyTorch wheel index),
in a small thread pool with a per-request deadline: a lock of a CUDA image asks ~40 packages."""

from __future__ import annotations

import json
import re
import ssl
import urllib.parse
import urllib.request
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor

from envkit.checks.programs.lockstate import INDEX_INSTALLERS, normalize

ACCEPT = "application/vnd.pypi.simple.v1+json, text/html;q=0.1"
HREF = re.compile(r"""href=["']([^"']+)["']""", re.IGNORECASE)
ARCHIVE = re.compile(r"^(?P<name>[^-]+)-(?P<version>[^-]+?)(?:-.*\.whl|\.tar\.gz|\.zip)$")
TIMEOUT_S = 20.0
WORKERS = 8


def _files(index: str, name: str) -> list[tuple[str, str]]:
    """(filename, sha256) of every file the index lists for `name`."""
    url = index.rstrip("/") + "/" + normalize(name) + "/"
    if not url.startswith(("https://", "http://")):
        raise ValueError(f"not an index URL: {url}")  # the config allows only these; be sure
    headers = {"Accept": ACCEPT, "User-Agent": "envkit"}
    request = urllib.request.Request(url, headers=headers)  # noqa: S310 - http(s) checked above
    context = ssl.create_default_context()
    with urllib.request.urlopen(request, timeout=TIMEOUT_S, context=context) as response:  # noqa: S310
        body = response.read(64 << 20).decode("utf-8", "replace")
        kind = response.headers.get("Content-Type", "")
    found: list[tuple[str, str]] = []
    if "json" in kind:
        for entry in json.loads(body).get("files", []):
            if digest := (entry.get("hashes") or {}).get("sha256"):
                found.append((entry["filename"], digest))
        return found
    for href in HREF.findall(body):
        path, _, fragment = urllib.parse.unquote(href.replace("&amp;", "&")).partition("#")
        if fragment.startswith("sha256="):
            found.append((path.rsplit("/", 1)[-1], fragment[len("sha256=") :]))
    return found


def _matching(files: Iterable[tuple[str, str]], name: str, version: str) -> list[str]:
    sums = set()
    for filename, digest in files:
        parsed = ARCHIVE.match(filename)
        if parsed and normalize(parsed["name"]) == normalize(name) and parsed["version"] == version:
            sums.add(f"sha256:{digest}")
    return sorted(sums)


def hashes_for(indexes: tuple[str, ...], name: str, version: str) -> list[str]:
    """The sums from the first index that serves this version; [] when none could be read."""
    for index in indexes:
        try:
            sums = _matching(_files(index, name), name, version)
        except (OSError, ValueError):  # unreachable, refused, not found, not a simple page
            continue
        if sums:
            return sums
    return []


def fill_hashes(
    packages: dict[str, tuple[str, ...]], indexes: tuple[str, ...]
) -> tuple[dict[str, tuple[str, ...]], list[str]]:
    """pip entries with their index sums in place of the installed RECORD's sum where the
    index serves that version, and the names it did not (they keep `record:`)."""
    wanted = [name for name, values in packages.items() if values[1] in INDEX_INSTALLERS]
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        sums = pool.map(lambda n: hashes_for(indexes, n, packages[n][0]), wanted)
        found = dict(zip(wanted, sums, strict=True))
    filled = dict(packages)
    for name in wanted:
        if found[name]:
            version, installer, _ = packages[name]
            filled[name] = (version, installer, ",".join(found[name]))
    return filled, sorted(name for name in wanted if not found[name])
