"""Pipenv's files as requirement lines, the way `pipenv requirements --hash` writes them: a
Pipfile.lock's default packages at their locked versions with their sha256 (its dev packages
left out), or a Pipfile's [packages] as their specifiers. Both are data, JSON and TOML, read by
their own parsers; what a line means is pip's, after this."""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urlsplit

from envkit.errors import ConfigError, file_issue
from envkit.files import TOMLDecodeError, toml_loads

PYPI = ("pypi.org", "pypi.python.org")  # PyPI itself: the pip mirror stands for it
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
FIX = "relock with `pipenv lock`, or name a requirements file in packages.requirements"


def is_pipenv(name: str) -> bool:
    return name.rsplit("/", 1)[-1] in ("Pipfile", "Pipfile.lock")


def pipenv_requirements(name: str, text: str) -> str:
    """The requirement lines NAME (a Pipfile or Pipfile.lock) stands for."""
    locked = name.endswith(".lock")
    try:
        data = json.loads(text) if locked else toml_loads(text)
    except (ValueError, TOMLDecodeError) as exc:
        line = int(getattr(exc, "lineno", 0) or 1)
        raise in_file(
            name, line, f"not a {'JSON' if locked else 'TOML'} file: {exc}", FIX
        ) from None
    if not isinstance(data, dict):
        raise in_file(name, 1, "not a Pipenv file (a mapping)", FIX)
    sources = data.get("_meta", {}).get("sources") if locked else data.get("source")
    packages = data.get("default" if locked else "packages") or {}
    lines = [f"# {name}'s {'default' if locked else '[packages]'}, as Pipenv installs them"]
    lines += _index_lines(sources)
    entries = [_line(name, text, n, entry) for n, entry in sorted(packages.items())]
    if any("--hash" not in line for line in entries) and locked:
        # a git or path entry has no hash, and pip checks every line or none
        entries = [line.split(" --hash=", 1)[0] for line in entries]
        lines.append("# envkit: hashes left out: a git or path entry has none, and pip checks all")
    return "\n".join(lines + entries) + "\n"


def _index_lines(sources: Any) -> list[str]:
    """Pipenv's sources beyond PyPI, as pip's index lines (PyPI itself is the mirror's)."""
    urls = [s.get("url") for s in sources or () if isinstance(s, dict)]
    return [
        f"--extra-index-url {u}"
        for u in urls
        if isinstance(u, str) and urlsplit(u).hostname not in PYPI
    ]


def _line(name: str, text: str, package: str, entry: Any) -> str:
    line_no = next((n for n, t in enumerate(text.splitlines(), 1) if f'"{package}"' in t), 1)
    if not NAME.fullmatch(package):
        raise in_file(name, line_no, f"{package!r} is not a package name", FIX)
    if isinstance(entry, str):  # a Pipfile's `numpy = "*"`
        return package + ("" if entry.strip() == "*" else entry.strip())
    if not isinstance(entry, dict):
        raise in_file(name, line_no, f"{package}: not a version or a table", FIX)
    extras = f"[{','.join(entry['extras'])}]" if entry.get("extras") else ""
    if "git" in entry:
        url = str(entry["git"]).removeprefix("git+")
        ref = f"@{entry['ref']}" if entry.get("ref") else ""
        requirement = f"{package}{extras} @ git+{url}{ref}"
    elif "path" in entry or "file" in entry:
        where = str(entry.get("path") or entry.get("file"))
        requirement = ("-e " if entry.get("editable") else "") + where
    else:
        version = str(entry.get("version", "*")).strip()
        requirement = package + extras + ("" if version == "*" else version)
    if entry.get("markers"):
        requirement += f" ; {entry['markers']}"
    hashes = [h for h in entry.get("hashes") or () if isinstance(h, str)]
    return requirement + "".join(f" --hash={h}" for h in hashes)


def in_file(name: str, line: int, problem: str, fix: str) -> ConfigError:
    return ConfigError(name, [file_issue(name, line, None, problem, fix)])
