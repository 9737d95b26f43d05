"""Each published source's answer turned into facts. Pure functions of the answers' text, so a
recording replays exactly."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin

from envkit.catalog.compat import cuda_of, version_key

PYPI_URL = "https://pypi.org/pypi/torch/json"
WHEEL_INDEX_URL = "https://download.pytorch.org/whl/torch/"
HUB_TAGS_URL = "https://hub.docker.com/v2/repositories/{repo}/tags?page_size=100&name={name}"

_FINAL = re.compile(r"^\d+\.\d+\.\d+$")
# torch-2.5.1-cp311-cp311-manylinux1_x86_64.whl (cp311t is free-threaded: same Python version)
_LINUX_WHEEL = re.compile(r"^torch-([\d.]+)-cp(\d)(\d+)t?-cp\d+[mut]*-manylinux[^-]*x86_64\.whl$")
# torch-2.7.0-cp311-cp311-manylinux_2_28_aarch64.whl: PyPI's Arm wheel (Grace nodes)
_ARM_WHEEL = re.compile(r"^torch-([\d.]+)-cp(\d)(\d+)t?-cp\d+[mut]*-manylinux[^-]*aarch64\.whl$")


@dataclass(frozen=True)
class PypiRelease:
    version: str
    python: tuple[str, ...]  # "3.11", ... from the Linux x86-64 wheels' tags
    wheel_url: str  # one Linux x86-64 wheel: its METADATA says which CUDA build PyPI carries
    arm_wheel_url: str | None = None  # one Linux aarch64 wheel, where PyPI has any


def trim_pypi(text: str) -> str:
    """The PyPI JSON answer cut to what the refresh reads (a recording stays reviewable)."""
    raw = json.loads(text)
    keep = ("filename", "url", "yanked", "upload_time")
    releases = {
        version: [
            {k: f.get(k) for k in keep}
            for f in files
            if _LINUX_WHEEL.match(f["filename"]) or _ARM_WHEEL.match(f["filename"])
        ]
        for version, files in raw["releases"].items()
    }
    return json.dumps({"info": {"version": raw["info"]["version"]}, "releases": releases}, indent=0)


def pypi_releases(text: str, since: str) -> dict[str, PypiRelease]:
    """Final releases from `since` on that have live Linux x86-64 wheels."""
    raw = json.loads(text)
    found: dict[str, PypiRelease] = {}
    for version, files in raw["releases"].items():
        if not _FINAL.match(version) or version_key(version) < version_key(since):
            continue
        wheels = [f for f in files if not f.get("yanked") and _LINUX_WHEEL.match(f["filename"])]
        if not wheels:
            continue
        tags = (_LINUX_WHEEL.match(wheel["filename"]) for wheel in wheels)  # each matches
        python = tuple(sorted({f"{m.group(2)}.{m.group(3)}" for m in tags if m}, key=version_key))
        arm = [f for f in files if not f.get("yanked") and _ARM_WHEEL.match(f["filename"])]
        found[version] = PypiRelease(version, python, str(_first_url(wheels)), _first_url(arm))
    return dict(sorted(found.items(), key=lambda item: version_key(item[0])))


def _first_url(files: list[dict[str, Any]]) -> str | None:
    """The first wheel's URL by name (the JSON API's URLs may be relative to it, a proxy's; pip
    resolves them the same way)."""
    if not files:
        return None
    return urljoin(PYPI_URL, str(sorted(files, key=lambda f: str(f["filename"]))[0]["url"]))


def pypi_cuda(facts: dict[str, Any], machine: str = "x86_64") -> str | None:
    """The CUDA build of PyPI's wheel on MACHINE: its nvidia/cuda-toolkit requirement, or the
    CUDA runtime it bundles (releases before 1.13); None for a CPU wheel. The requirements'
    markers are evaluated for MACHINE: torch's aarch64 wheels name the same nvidia-* packages
    as the x86-64 ones, for `platform_machine == "x86_64"` only, until they became CUDA builds."""
    from packaging.markers import InvalidMarker, UndefinedComparison
    from packaging.requirements import InvalidRequirement, Requirement

    where = {"platform_machine": machine, "platform_system": "Linux", "sys_platform": "linux"}
    for line in facts.get("requires_dist", []):
        try:
            requirement = Requirement(line)
            applies = requirement.marker is None or requirement.marker.evaluate(where)
        except (InvalidRequirement, InvalidMarker, UndefinedComparison):
            continue
        if not applies:
            continue
        pinned = re.match(
            r"(?:nvidia-cuda-runtime-cu\d+|cuda-toolkit\[[^\]]*\])\s*\(?==\s*(\d+\.\d+)", line
        )
        if pinned:
            return pinned.group(1)
    for name in facts.get("bundled", []):
        found = re.search(r"\.so\.(\d+\.\d+)$", name)
        if found:
            return found.group(1)
    return None


def wheel_index_builds(html: str, machine: str = "x86_64") -> dict[str, set[str]]:
    """torch release -> its CUDA builds, from the PyTorch wheel index's Linux wheels of one
    architecture (x86_64, or aarch64: the Grace nodes' CUDA builds live only there). A wheel's
    build is its local version (+cu128), else the folder it is served from (/whl/cu124/: the
    2.5 aarch64 CUDA wheels carry no local version)."""
    builds: dict[str, set[str]] = {}
    pattern = (
        r"(?:/whl/(cu\d+|[a-z]\w*)/)?torch-(\d+\.\d+\.\d+)(?:%2B(cu\d+))?-cp\d+-cp\d+[mut]*-"
        r"(?:manylinux[^-\"]*|linux)_" + re.escape(machine) + r"\.whl"
    )
    for folder, version, label in re.findall(pattern, html.replace("+", "%2B")):
        tag = label or (folder if folder.startswith("cu") else "")
        if tag:
            builds.setdefault(version, set()).add(cuda_of(tag))
    return builds


def hub_tags(pages: list[str]) -> dict[str, tuple[str, ...]]:
    """Tag name -> the architectures its image is published for (each result's `images`); a
    result that lists none is taken as amd64's alone, the only one Docker Hub had before."""
    tags: dict[str, tuple[str, ...]] = {}
    for page in pages:
        for result in json.loads(page).get("results", []):
            arches = tuple(sorted({str(i.get("architecture")) for i in result.get("images") or []}))
            tags[str(result["name"])] = arches or ("amd64",)
    return tags


def next_hub_page(page: str) -> str | None:
    following = json.loads(page).get("next")
    return str(following) if following else None


def on_arch(tags: dict[str, tuple[str, ...]], arch: str) -> list[str]:
    """The tags with an image for ARCH (amd64, arm64)."""
    return [name for name, arches in tags.items() if arch in arches]


def pytorch_images(release: str, tags: list[str]) -> dict[str, int]:
    """CUDA version -> cuDNN major of the pytorch/pytorch runtime images of one release."""
    pattern = re.escape(release) + r"-cuda(\d+\.\d+)-cudnn(\d+)-runtime"
    images = {m.group(1): int(m.group(2)) for tag in tags if (m := re.fullmatch(pattern, tag))}
    return dict(sorted(images.items(), key=lambda item: version_key(item[0])))


def nvidia_cuda_ubuntus(full: str, cudnn_tag: str, tags: list[str]) -> list[str]:
    """Ubuntu releases with an nvidia/cuda {full}-{cudnn}-runtime image, newest first."""
    pattern = re.escape(f"{full}-{cudnn_tag}-runtime-ubuntu") + r"(\d+\.\d+)"
    found = {m.group(1) for tag in tags if (m := re.fullmatch(pattern, tag))}
    return sorted(found, key=version_key, reverse=True)
