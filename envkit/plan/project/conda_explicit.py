"""A conda explicit file (`conda list --explicit --md5 > spec.txt`, conda-lock's
`conda-linux-64.lock`): an `@EXPLICIT` line, then one package URL per line with its md5 or
sha256 after `#`. Installed like a conda lock's packages (every URL through the mirror, every
download checked, nothing solved); refused at its lines where a package has no checksum, a URL
is not https, or the file is for another platform."""

from __future__ import annotations

import re

from envkit.errors import ConfigError, ConfigIssue, file_issue
from envkit.plan.project.conda_locks import IMAGE_PLATFORM, CondaLockPackages, check_url, python_of

EXPLICIT = "@EXPLICIT"
PLATFORM_LINE = re.compile(r"#\s*platform:\s*(\S+)")
DIGEST = re.compile(r"(?:sha256:)?([0-9a-fA-F]{64})|(?:md5:)?([0-9a-fA-F]{32})")
SUBDIR = re.compile(r"/(linux-64|linux-aarch64|linux-ppc64le|osx-64|osx-arm64|win-64|noarch)/")


def is_explicit(text: str) -> bool:
    return any(line.strip() == EXPLICIT for line in text.splitlines())


def read_explicit(name: str, text: str, platform: str = IMAGE_PLATFORM) -> CondaLockPackages:
    """PLATFORM's packages of the explicit file NAME; every problem at once (ConfigError)."""
    issues: list[ConfigIssue] = []
    conda: list[tuple[str, str, str]] = []
    python = None
    started = False
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        said = PLATFORM_LINE.fullmatch(line)
        if said and said.group(1) != platform:
            issues.append(
                file_issue(
                    name,
                    number,
                    said.group(1),
                    f"an explicit file for {said.group(1)}; the image is {platform}",
                    f"export it on {platform} (conda list --explicit --md5), or build from "
                    "the environment.yml it was made from",
                )
            )
        if line == EXPLICIT:
            started = True
        elif started and line and not line.startswith("#"):
            entry = _package(name, number, line, platform, issues)
            if entry:
                conda.append(entry)
                python = python_of(entry[0]) or python
    if not started:
        issues.append(file_issue(name, 1, None, f"no {EXPLICIT} line", "export it again"))
    if issues:
        raise ConfigError(name, issues)
    return CondaLockPackages(name, "explicit", platform, tuple(conda), (), python)


def _package(
    name: str, number: int, line: str, platform: str, issues: list[ConfigIssue]
) -> tuple[str, str, str] | None:
    """(URL, sha256, md5) of one package line; None where it is refused (said in ISSUES)."""
    url, _, digest = line.partition("#")
    url = url.strip()
    problem = check_url(url)
    subdir = SUBDIR.search(url)
    found = DIGEST.fullmatch(digest.strip())
    if problem:
        issues.append(file_issue(name, number, url, problem, "export it from https channels"))
    elif subdir and subdir.group(1) not in (platform, "noarch"):
        problem = f"a {subdir.group(1)} package; the image is {platform}"
        issues.append(file_issue(name, number, url, problem, f"export it on {platform}"))
    elif not found:
        fix = "export it with checksums: conda list --explicit --md5"
        issues.append(file_issue(name, number, url, "a package without an md5 or sha256", fix))
    else:
        return url, (found.group(1) or "").lower(), (found.group(2) or "").lower()
    return None
