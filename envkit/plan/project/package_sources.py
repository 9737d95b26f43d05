"""A project's own package sources ([[tool.pdm.source]], [[tool.poetry.source]],
[[tool.uv.index]]: cosmos' own wheel index for apex and natten) as pip's
options for the layer that installs its dependencies: an index (PDM's default type, every
Poetry source) searched beside the mirror (--extra-index-url), a PDM `find_links` source as
--find-links, as PDM and Poetry search them all; PyPI itself is the mirror's to serve. A URL must
be https (or http on a host in mirrors.trusted_hosts) and carry no credentials, which would stay
in the image's history: a private index's login goes in the building machine's netrc."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from envkit.errors import ConfigError, ConfigIssue, file_issue

OPTIONS = {"index": "--extra-index-url", "find_links": "--find-links"}
PYPI = ("pypi.org", "pypi.python.org", "files.pythonhosted.org")
PYTORCH_INDEX = "download.pytorch.org"


def _problem(source: Any, trusted: tuple[str, ...]) -> tuple[str, str] | None:
    """What is wrong with one [[tool.pdm.source]] entry, and its fix; None where nothing is."""
    if not isinstance(source, dict) or not isinstance(source.get("url"), str):
        return "a source without a url", "give each [[tool.pdm.source]] its url"
    kind, parts = source.get("type", "index"), urlsplit(source["url"])
    if kind not in OPTIONS:
        return f"source type {kind!r} is not PDM's", 'write type = "index" or "find_links"'
    if parts.username or parts.password or "${" in source["url"]:
        return (
            "a source URL with credentials: they would stay in the image's history",
            "drop them from the URL and put the login in the building machine's ~/.netrc",
        )
    if parts.scheme == "https" or (parts.scheme == "http" and parts.hostname in trusted):
        return None
    return (
        f"a source over {parts.scheme or 'no scheme'}: packages could be changed on the way",
        f"use https, or opt in with mirrors.trusted_hosts: [{parts.hostname}]",
    )


def _as_pdm(source: Any) -> Any:
    """A [[tool.uv.index]] entry as a PDM source: uv's `format = "flat"` is find_links."""
    if isinstance(source, dict) and source.get("format") == "flat":
        return {**source, "type": "find_links"}
    return source


def package_sources(
    name: str, text: str, data: dict[str, Any], trusted: tuple[str, ...]
) -> tuple[str, ...]:
    """pip's options for NAME's [[tool.pdm.source]], [[tool.poetry.source]] and
    [[tool.uv.index]] entries; every problem at once."""
    tool = data.get("tool") or {}
    sources = [
        source
        for manager, key in (("pdm", "source"), ("poetry", "source"), ("uv", "index"))
        for found in [(tool.get(manager) or {}).get(key) or []]
        for source in map(_as_pdm, found if isinstance(found, list) else [found])
    ]
    options: list[str] = []
    issues: list[ConfigIssue] = []
    for source in sources:
        problem = _problem(source, trusted)
        url = str(source.get("url")) if isinstance(source, dict) else str(source)
        if problem is None and urlsplit(url).hostname in (*PYPI, PYTORCH_INDEX):
            continue  # the mirror stands for PyPI; torch's layer takes torch from its index
        if problem is not None:
            line = next((n for n, t in enumerate(text.splitlines(), 1) if url in t), None)
            shown = re.sub(r"//[^/@]*@", "//***@", url)[:120]  # a token is never echoed
            issues.append(file_issue(name, line, shown, *problem))
        else:
            options += [OPTIONS[source.get("type", "index")], url]
    if issues:
        raise ConfigError(name, issues)
    return tuple(options)
