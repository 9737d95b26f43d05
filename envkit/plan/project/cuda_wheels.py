"""Packages built for one CUDA, as their names say: CuPy's cupy-cuda12x and cupy-cuda111,
RAPIDS' cudf-cu12, spconv-cu118, mxnet-cu112, tensorrt-cu12, nvidia-dali-cuda120, JAX's
jax[cuda12] and jax-cuda12-plugin. Each loads the CUDA libraries of its own major (their
sonames carry it; before 11.2, NVRTC's carried the minor too), so one built for another CUDA
installs cleanly and fails when used: init proposes the CUDA it names, render says a mismatch
at its line with the fix, and keeps the line (it is the project's)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from envkit.catalog.compat import same_major_build, version_key

# a dash-separated part of the name (cu12, cu118, cuda12x, cuda111), or an extra (cuda12,
# cuda12_pip, cuda12-local): CUDA 12, 11.8, 12, 11.1
IN_NAME = re.compile(r"(?:^|-)cu(?:da)?(\d{2,3})x?(?:-|$)")
IN_EXTRA = re.compile(r"cuda(\d{2})(?:[-_].*)?")
MINOR_SONAMES = (11, 2)  # before CUDA 11.2 a build needed its own minor's libraries


def built_for(requirement: Requirement) -> str | None:
    """The CUDA REQUIREMENT's package was built for: "11.1" (a minor), "12" (a major); None
    where its name and extras name none."""
    found = IN_NAME.search(canonicalize_name(requirement.name))
    digits = found.group(1) if found else None
    for extra in requirement.extras:
        digits = digits or ((m := IN_EXTRA.fullmatch(extra.lower())) and m.group(1)) or None
    if digits is None:
        return None
    return digits if len(digits) == 2 else f"{digits[:-1]}.{digits[-1]}"


def first_built_for(requirements: Iterable[Requirement]) -> tuple[str, str] | None:
    """(CUDA, the line naming it) of the first requirement built for one CUDA."""
    return next(((c, str(r)) for r in requirements if (c := built_for(r))), None)


def mismatch(requirement: Requirement, image_cuda: str | None, torch: str | None) -> str | None:
    """Why REQUIREMENT's build cannot use the image's CUDA ("12.1", "cpu"), with the fix (the
    `cuda:` of TORCH's builds that meets it, where one does); None where it can, where it names
    no CUDA, or where the image decides its CUDA (None)."""
    built = built_for(requirement)
    if built is None or image_cuda is None or _runs_on(built, image_cuda):
        return None
    to = same_major_build(torch, built) if torch else None
    other = f", or set `cuda:` to {to}" if to and _runs_on(built, to) else ""
    if image_cuda == "cpu":
        return f"{requirement} is built for CUDA {built}, and the image has none{other}"
    return (
        f"{requirement} is built for CUDA {built} and the image has CUDA {image_cuda}: it "
        f"installs, and fails when used; install its build for CUDA "
        f"{image_cuda.split('.')[0]}{other}"
    )


def _runs_on(built: str, cuda: str) -> bool:
    """Whether a package BUILT for a CUDA loads the libraries of CUDA ("cpu": none)."""
    if cuda == "cpu":
        return False
    have, want = version_key(cuda), version_key(built)
    exact = len(want) > 1 and want < MINOR_SONAMES  # 11.1's NVRTC is libnvrtc.so.11.1
    return have[:2] == want[:2] if exact else have[0] == want[0] and have >= want
