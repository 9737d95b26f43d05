"""One refresh: read every source through a fetcher, merge, and say what changed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

from envkit.catalog.compat import version_key
from envkit.catalog.refresh import readings as read
from envkit.catalog.refresh.fetch import Fetcher, SourceUnavailableError
from envkit.catalog.refresh.merge import Readings, merge
from envkit.catalog.refresh.text import diff, table_text


@dataclass(frozen=True)
class Refreshed:
    text: str
    diff: str
    problems: tuple[str, ...]
    sources: dict[str, str]


def _pypi(fetcher: Fetcher, since: str, problems: list[str]) -> dict[str, dict[str, Any]] | None:
    try:
        releases = read.pypi_releases(fetcher.text(read.PYPI_URL, read.trim_pypi), since)
    except SourceUnavailableError as exc:
        problems.append(f"PyPI did not answer ({exc}): its facts are the previous table's")
        return None
    found: dict[str, dict[str, Any]] = {}
    for version, release in releases.items():
        try:
            cuda = read.pypi_cuda(fetcher.wheel(release.wheel_url))
        except SourceUnavailableError as exc:
            problems.append(f"torch {version}'s wheel could not be read ({exc})")
            cuda = None
        # What PyPI's aarch64 wheel is: its CUDA version, "cpu", or None where PyPI has none
        # (or it could not be read: then the previous table's fact stays).
        arm = None
        if release.arm_wheel_url is not None:
            try:
                arm = read.pypi_cuda(fetcher.wheel(release.arm_wheel_url), "aarch64") or "cpu"
            except SourceUnavailableError as exc:
                problems.append(f"torch {version}'s aarch64 wheel could not be read ({exc})")
        found[version] = {"python": release.python, "default_cuda": cuda, "arm64_pypi": arm}
    return found


def _wheel_index(fetcher: Fetcher, problems: list[str]) -> dict[str, dict[str, set[str]]] | None:
    """Per architecture (amd64, arm64): torch release -> its CUDA builds on the index."""
    try:
        page = fetcher.text(read.WHEEL_INDEX_URL)
    except SourceUnavailableError as exc:
        problems.append(f"the PyTorch wheel index did not answer ({exc}): CUDA builds kept")
        return None
    return {
        "amd64": read.wheel_index_builds(page, "x86_64"),
        "arm64": read.wheel_index_builds(page, "aarch64"),
    }


def _hub_tags(fetcher: Fetcher, repo: str, name: str) -> dict[str, tuple[str, ...]]:
    pages: list[str] = []
    url: str | None = read.HUB_TAGS_URL.format(repo=repo, name=name)
    while url is not None and len(pages) < 20:
        pages.append(fetcher.text(url))
        url = read.next_hub_page(pages[-1])
    return read.hub_tags(pages)


Images = dict[str, dict[str, dict[str, int]]]  # arch -> release -> {cuda: cuDNN major}
Ubuntus = dict[str, dict[str, list[str]]]  # arch -> CUDA version -> Ubuntu bases


def _hub(
    fetcher: Fetcher, releases: list[str], cuda: dict[str, Any], problems: list[str]
) -> tuple[Images | None, Ubuntus | None]:
    """The pytorch/pytorch and nvidia/cuda images, per architecture (each tag's images)."""
    arches = ("amd64", "arm64")
    try:
        pytorch = {v: _hub_tags(fetcher, "pytorch/pytorch", f"{v}-cuda") for v in releases}
        nvidia = {
            v: (row, _hub_tags(fetcher, "nvidia/cuda", f"{row['full']}-{row['cudnn_tag']}-runtime"))
            for v, row in cuda.items()
            if row.get("full")
        }
    except SourceUnavailableError as exc:
        problems.append(f"Docker Hub did not answer ({exc}): image tags kept")
        return None, None
    images = {
        a: {v: read.pytorch_images(v, read.on_arch(tags, a)) for v, tags in pytorch.items()}
        for a in arches
    }
    ubuntus = {
        a: {
            v: read.nvidia_cuda_ubuntus(str(row["full"]), row["cudnn_tag"], read.on_arch(tags, a))
            for v, (row, tags) in nvidia.items()
        }
        for a in arches
    }
    return images, ubuntus


def refresh(fetcher: Fetcher, previous_text: str, today: str) -> Refreshed:
    previous = yaml.safe_load(previous_text)
    since = min(previous["torch"], key=version_key)
    problems: list[str] = []
    pypi = _pypi(fetcher, since, problems)
    wheel_index = _wheel_index(fetcher, problems)
    releases = list(pypi) if pypi is not None else list(previous["torch"])
    images, ubuntus = _hub(fetcher, releases, previous["cuda"], problems)
    readings = Readings(today, pypi, wheel_index, images, ubuntus, problems)
    table = merge(previous, readings)
    text = table_text(table)
    return Refreshed(text, diff(previous_text, text), tuple(problems), table["sources"])
