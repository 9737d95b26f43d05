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
        found[version] = {"python": release.python, "default_cuda": cuda}
    return found


def _wheel_index(fetcher: Fetcher, problems: list[str]) -> dict[str, set[str]] | None:
    try:
        return read.wheel_index_builds(fetcher.text(read.WHEEL_INDEX_URL))
    except SourceUnavailableError as exc:
        problems.append(f"the PyTorch wheel index did not answer ({exc}): CUDA builds kept")
        return None


def _hub_tags(fetcher: Fetcher, repo: str, name: str) -> list[str]:
    pages: list[str] = []
    url: str | None = read.HUB_TAGS_URL.format(repo=repo, name=name)
    while url is not None and len(pages) < 20:
        pages.append(fetcher.text(url))
        url = read.next_hub_page(pages[-1])
    return read.hub_tag_names(pages)


def _hub(
    fetcher: Fetcher, releases: list[str], cuda: dict[str, Any], problems: list[str]
) -> tuple[dict[str, dict[str, int]] | None, dict[str, list[str]] | None]:
    try:
        images = {
            v: read.pytorch_images(v, _hub_tags(fetcher, "pytorch/pytorch", f"{v}-cuda"))
            for v in releases
        }
        ubuntus = {
            v: read.nvidia_cuda_ubuntus(
                str(row["full"]),
                row["cudnn_tag"],
                _hub_tags(fetcher, "nvidia/cuda", f"{row['full']}-{row['cudnn_tag']}-runtime"),
            )
            for v, row in cuda.items()
            if row.get("full")
        }
    except SourceUnavailableError as exc:
        problems.append(f"Docker Hub did not answer ({exc}): image tags kept")
        return None, None
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
