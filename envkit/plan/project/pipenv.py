"""Pipenv's files as requirement lines, as `pipenv requirements --hash` writes them: a
Pipfile.lock's default packages at their locked versions with their sha256, or a Pipfile's
[packages]; JSON and TOML read by their own parsers, each value checked as what it is."""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urlsplit

from packaging.markers import InvalidMarker, default_environment
from packaging.requirements import InvalidRequirement, Requirement

from envkit.errors import ConfigError, in_file
from envkit.files import TOMLDecodeError, toml_loads
from envkit.names import PYPI_NAME

PYPI = ("pypi.org", "pypi.python.org")  # PyPI itself: the pip mirror stands for it
URL = re.compile(r"https://[A-Za-z0-9.-]+(?::\d+)?(?:/[A-Za-z0-9._~%+-]*)*/?(?:\.git)?")
REF = re.compile(r"(?:@[A-Za-z0-9._/-]+)?(?:#subdirectory=[A-Za-z0-9._/-]+)?")
PATH = re.compile(r"[A-Za-z0-9._/-]+")
HASH = re.compile(r"sha256:[0-9a-f]{64}")
# Pipfile's marker keys (`pywin32 = {version = "*", sys_platform = "== 'win32'"}`)
MARKER_KEYS = tuple(default_environment())  # PEP 508's marker variables
FIX = "relock with `pipenv lock`, or name a requirements file in packages.requirements"


def is_pipenv(name: str) -> bool:
    return name.rsplit("/", 1)[-1] in ("Pipfile", "Pipfile.lock")


def pipfile_facts(name: str, text: str) -> tuple[str | None, int]:
    """(the Python X.Y a Pipfile requires ([requires] python_version; a lock's
    _meta.requires), how many packages its [dev-packages] (a lock's develop) names); (None,
    0) where the file cannot be read (pipenv_requirements says why)."""
    try:
        data = json.loads(text) if name.endswith(".lock") else toml_loads(text)
        requires = (data.get("_meta") or {}).get("requires") or data.get("requires") or {}
        version = str(requires.get("python_version") or requires.get("python_full_version"))
        dev = len(data.get("develop") or data.get("dev-packages") or {})
    except (ValueError, TOMLDecodeError, AttributeError, TypeError):
        return None, 0
    found = re.fullmatch(r"(3\.\d+)(\.\d+)?", version)
    return (found.group(1) if found else None), dev


def pipenv_requirements(name: str, text: str) -> str:
    """The requirement lines NAME (a Pipfile or Pipfile.lock) stands for. Every value is
    checked as what it is (a requirement as pip parses it, a sha256, an https URL, a path) so
    that nothing in the file adds a line or an option of its own."""
    locked = name.endswith(".lock")
    try:
        data = json.loads(text) if locked else toml_loads(text)
    except (ValueError, TOMLDecodeError) as exc:
        line = int(getattr(exc, "lineno", 0) or 1)
        kind = "JSON" if locked else "TOML"
        raise in_file(name, line, f"not a {kind} file: {exc}", FIX) from None
    meta = data.get("_meta") if isinstance(data, dict) and locked else {}
    sources = (meta or {}).get("sources") if locked else data.get("source")
    packages = data.get("default" if locked else "packages") if isinstance(data, dict) else None
    if not isinstance(packages or {}, dict) or not isinstance(sources or [], list):
        raise in_file(name, 1, "not a Pipenv file (its packages a table, its sources a list)", FIX)
    lines = [f"# {name}'s {'default' if locked else '[packages]'}, as Pipenv installs them"]
    lines += _index_lines(name, sources or [])
    entries, issues = [], []
    for package, entry in sorted((packages or {}).items()):  # every problem at once
        try:
            entries.append(_line(name, text, package, entry))
        except ConfigError as exc:
            issues += exc.issues
    if issues:
        raise ConfigError(name, issues)
    if locked and any("--hash" not in e and not e.startswith("-e ") for e in entries):
        # a git or file entry has no hash, and pip checks every line or none (an editable
        # folder is installed at first start, not by this file)
        entries = [line.split(" --hash=", 1)[0] for line in entries]
        lines.append("# envkit: hashes left out: a git or file entry has none, and pip checks all")
    return "\n".join(lines + entries) + "\n"


def _index_lines(name: str, sources: list[Any]) -> list[str]:
    """Pipenv's sources beyond PyPI, as pip's index lines (PyPI itself is the mirror's)."""
    urls: list[str] = []
    for url in (s.get("url") for s in sources if isinstance(s, dict)):
        if not (isinstance(url, str) and URL.fullmatch(url)):
            raise in_file(name, 1, f"a source URL that is not plain https: {url!r}", FIX)
        urls.append(url)
    return [f"--extra-index-url {u}" for u in urls if urlsplit(u).hostname not in PYPI]


def _line(name: str, text: str, package: str, entry: Any) -> str:
    line_no = next((n for n, t in enumerate(text.splitlines(), 1) if f'"{package}"' in t), 1)
    if isinstance(entry, str):  # a Pipfile's `numpy = "*"`
        entry = {"version": entry}
    if not PYPI_NAME.fullmatch(package) or not isinstance(entry, dict):
        raise in_file(name, line_no, f"{package!r}: not a package name and its version", FIX)
    try:
        line = _requirement(package, entry)
    except (InvalidRequirement, InvalidMarker, ValueError, TypeError) as exc:
        raise in_file(
            name, line_no, f"{package}: not an entry pip can install ({exc})", FIX
        ) from None
    hashes = entry.get("hashes") or []
    if not isinstance(hashes, list) or not all(
        isinstance(h, str) and HASH.fullmatch(h) for h in hashes
    ):
        raise in_file(name, line_no, f"{package}: hashes that are not sha256:HEX", FIX)
    return line + "".join(f" --hash={h}" for h in hashes)


def _requirement(package: str, entry: dict[str, Any]) -> str:
    """One entry as pip's requirement line, parsed back to be sure it is one line of one
    requirement (a value with a newline or an option in it is refused)."""
    if "path" in entry or "file" in entry:
        where = str(entry.get("path") or entry.get("file"))
        if URL.fullmatch(where):  # a wheel or sdist by URL (torch's own wheel: read as its pin)
            return str(Requirement(f"{package} @ {where}"))
        if not PATH.fullmatch(where):
            raise ValueError(f"a path envkit does not copy: {where!r}")
        return ("-e " if entry.get("editable") else "") + where
    extras = f"[{','.join(map(str, entry['extras']))}]" if entry.get("extras") else ""
    if "git" in entry:
        url = str(entry["git"]).removeprefix("git+")
        ref = f"@{entry['ref']}" if entry.get("ref") else ""
        sub = f"#subdirectory={entry['subdirectory']}" if entry.get("subdirectory") else ""
        if not URL.fullmatch(url) or not REF.fullmatch(ref + sub):
            raise ValueError(f"a git source that is not plain https: {url!r}")
        line = f"{package}{extras} @ git+{url}{ref}{sub}"
    else:
        version = str(entry.get("version", "*")).strip()
        line = package + extras + ("" if version == "*" else version)
    markers = [str(entry["markers"])] if entry.get("markers") else []
    markers += [f"{key} {entry[key]}" for key in MARKER_KEYS if isinstance(entry.get(key), str)]
    requirement = Requirement(
        line + (" ; " + " and ".join(f"({m})" for m in markers) if markers else "")
    )
    return str(requirement)
