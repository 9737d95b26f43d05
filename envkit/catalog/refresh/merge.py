"""The new table: the previous one's hand-kept facts joined with what the sources said.

Hand-kept (never overwritten): each CUDA release's patch version, driver minimums (NVIDIA's
release notes), cuDNN tag part, and the default torch. Read from sources: the torch releases,
their Pythons and PyPI's build (PyPI), the other CUDA builds (the PyTorch wheel index), the
pytorch/pytorch and nvidia/cuda tags (Docker Hub). A source that did not answer leaves the
previous table's facts from it in place, and a row that depends on an unread source is
`confirmed: false`."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from envkit.catalog.compat import version_key


@dataclass
class Readings:
    """What each source said; None where it did not answer."""

    date: str
    pypi: dict[str, dict[str, Any]] | None  # version -> {python, default_cuda, arm64_pypi}
    wheel_index: dict[str, dict[str, set[str]]] | None  # arch -> version -> CUDA builds
    images: dict[str, dict[str, dict[str, int]]] | None  # arch -> version -> {cuda: cuDNN}
    ubuntus: dict[str, dict[str, list[str]]] | None  # arch -> CUDA -> nvidia/cuda Ubuntu bases
    problems: list[str] = field(default_factory=list)


def _new_cuda_row(version: str, cuda: dict[str, Any]) -> dict[str, Any]:
    """A CUDA release the torch rows use but the hand-kept part lacks: only what a rule gives.
    Minor-version compatibility makes the family floor the same within a major."""
    major = version.split(".")[0]
    same_major = [row for v, row in cuda.items() if v.split(".")[0] == major]
    floor = same_major[-1]["family_min_driver"] if same_major else None
    return {
        "full": None,
        "wheel": "cu" + version.replace(".", ""),
        "min_driver": None,
        "family_min_driver": floor,
        "cudnn_tag": "cudnn",
        "ubuntu": [],
    }


def _release_row(
    version: str, old: dict[str, Any] | None, readings: Readings, newest_old: dict[str, Any] | None
) -> dict[str, Any]:
    row = copy.deepcopy(old) if old else {}
    pypi = (readings.pypi or {}).get(version)
    if pypi is not None:
        row["python"] = list(pypi["python"])
        if pypi["default_cuda"] is not None:
            row["default_cuda"] = pypi["default_cuda"]
    builds = set(row.get("cuda", []))
    if readings.wheel_index is not None and version in readings.wheel_index["amd64"]:
        builds = set(readings.wheel_index["amd64"][version])
    if row.get("default_cuda"):
        builds.add(row["default_cuda"])
    row["cuda"] = sorted(builds, key=version_key)
    if readings.images is not None:
        row["images"] = readings.images["amd64"].get(version, {})
    elif old is None:
        row["images"] = _extrapolated_images(row["cuda"], newest_old)
    row["arm64"] = _arm64_row(version, row.get("arm64"), pypi, readings)
    sources_read = None not in (readings.pypi, readings.wheel_index, readings.images)
    row["confirmed"] = sources_read or bool(old and old.get("confirmed", True))
    return row


def _arm64_row(
    version: str, old: dict[str, Any] | None, pypi: dict[str, Any] | None, readings: Readings
) -> dict[str, Any]:
    """linux/arm64's builds of a release: the PyTorch index's aarch64 CUDA wheels, what PyPI's
    aarch64 wheel is (a CPU build, for the releases so far), its pytorch/pytorch images."""
    row = copy.deepcopy(old) if old else {"cuda": [], "pypi": None, "images": {}}
    index = readings.wheel_index
    if index is not None and (version in index["arm64"] or version in index["amd64"]):
        row["cuda"] = sorted(index["arm64"].get(version, set()), key=version_key)
    if pypi is not None and (pypi.get("arm64_pypi") is not None or old is None):
        row["pypi"] = pypi.get("arm64_pypi")
    if readings.images is not None:
        row["images"] = readings.images["arm64"].get(version, {})
    builds = set(row["cuda"])
    if row["pypi"] not in (None, "cpu"):  # PyPI's own CUDA build is one of them, as on x86-64
        builds.add(row["pypi"])
    return {"cuda": sorted(builds, key=version_key), "pypi": row["pypi"], "images": row["images"]}


def _extrapolated_images(builds: list[str], newest_old: dict[str, Any] | None) -> dict[str, int]:
    """A release newer than the last Docker Hub reading: the newest release's pattern (an image
    per CUDA build, same cuDNN) carried forward, and the row marked unconfirmed."""
    if not newest_old or not newest_old.get("images"):
        return {}
    cudnn = max(newest_old["images"].values())
    if set(newest_old["images"]) != set(newest_old["cuda"]):
        return {}
    return {cuda: cudnn for cuda in builds}


def merge(previous: dict[str, Any], readings: Readings) -> dict[str, Any]:
    table = copy.deepcopy(previous)
    old_rows: dict[str, Any] = previous["torch"]
    versions = list(old_rows) if readings.pypi is None else list(readings.pypi)
    newest_old = old_rows[sorted(old_rows, key=version_key)[-1]] if old_rows else None
    rows = {v: _release_row(v, old_rows.get(v), readings, newest_old) for v in versions}
    table["torch"] = {v: rows[v] for v in sorted(rows, key=version_key)}
    cuda = table["cuda"]
    for version in sorted({c for row in rows.values() for c in row["cuda"]}, key=version_key):
        if version not in cuda:
            cuda[version] = _new_cuda_row(version, cuda)
    if readings.ubuntus is not None:
        for version, row in cuda.items():
            if version in readings.ubuntus["amd64"]:
                row["ubuntu"] = readings.ubuntus["amd64"][version]
            if version in readings.ubuntus["arm64"]:
                row["arm64_ubuntu"] = readings.ubuntus["arm64"][version]
    table["cuda"] = {v: cuda[v] for v in sorted(cuda, key=version_key)}
    table["sources"] = _source_dates(previous.get("sources", {}), readings)
    if (table["cuda"], table["torch"]) != (previous["cuda"], previous["torch"]):
        table["as_of"] = readings.date
        month = readings.date[:7].replace("-", ".")
        prefix, _, serial = str(previous["table_version"]).rpartition(".")
        table["table_version"] = f"{month}.{int(serial) + 1 if prefix == month else 1}"
    return table


def _source_dates(old: dict[str, str], readings: Readings) -> dict[str, str]:
    """When each source was last read (a source that did not answer keeps its old date)."""
    answered = {
        "pypi": readings.pypi is not None,
        "wheel_index": readings.wheel_index is not None,
        "docker_hub": readings.images is not None and readings.ubuntus is not None,
    }
    return {name: readings.date if ok else old.get(name, "never") for name, ok in answered.items()}
