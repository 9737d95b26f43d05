"""`envkit sbom`: the image's bill of materials, from its lock (CycloneDX 1.6 or SPDX 2.3), and
optionally held against syft's scan of the built image."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from envkit.checks.programs.lockfile import Lock
from envkit.errors import EnvkitError
from envkit.files import write_atomically
from envkit.services.project import LOCK_FILE, Project, load_project

if TYPE_CHECKING:
    from envkit.supply.parts import Inventory

Format = Literal["cyclonedx", "spdx"]


@dataclass(frozen=True, kw_only=True)
class SbomRequest:
    config: str | None = None
    output: Path | None = None  # None or "-": stdout
    format: Format | None = None  # None: from the output's name (*.spdx.json is SPDX)
    lock_file: Path | None = None  # default: envkit.lock beside envkit.yaml, else the image's
    syft: bool = False  # compare with syft's scan of the built image


def _lock(project: Project, given: Path | None) -> tuple[Lock, str, str]:
    """The lock, its text, and where it came from: the file (checked against envkit.yaml),
    else what the built image holds, read as `envkit lock` reads it."""
    from envkit.lock.pins import conda_prefixes, read_lock
    from envkit.lock.requested import check_matches

    path = given or project.project_dir / LOCK_FILE
    if given is not None or path.exists():
        lock, text = read_lock(path, conda_prefixes(project.plan))
        check_matches(lock["requested"], project.plan, str(path))
        return lock, text, str(path)
    from envkit.lock.make import make_lock

    made = make_lock(project.plan, project.plan.image.tag)
    return made.lock, made.text, f"the image {project.plan.image.tag} (no {LOCK_FILE} yet)"


def _format(request: SbomRequest) -> Format:
    if request.format is not None:
        return request.format
    name = request.output.name if request.output else ""
    return "spdx" if name.endswith((".spdx.json", ".spdx")) else "cyclonedx"


def run(request: SbomRequest) -> int:
    from envkit.supply.parts import inventory

    project = load_project(request.config)
    if request.output is not None and str(request.output) != "-" and request.output.is_dir():
        raise EnvkitError(f"-o {request.output} is a folder", "name the file, e.g. sbom.cdx.json")
    lock, text, source = _lock(project, request.lock_file)
    made = inventory(lock, text, project.plan)
    if _format(request) == "spdx":
        from envkit.supply.sbom_spdx import spdx_json as render
    else:
        from envkit.supply.sbom_cyclonedx import cyclonedx_json as render
    document = render(made)
    if request.output is None or str(request.output) == "-":
        sys.stdout.write(document)
    else:
        write_atomically(request.output, document)
        sys.stderr.write(f"wrote {request.output}: {len(made.parts)} packages, from {source}\n")
    return _compare(project, made) if request.syft else 0


def _compare(project: Project, made: Inventory) -> int:
    """Exit 0 where syft finds nothing the SBOM lacks, else 1 with every difference named."""
    from envkit.engine.client import docker_client, require_image
    from envkit.supply.syft_check import differences, scan

    image = project.plan.image.tag
    require_image(docker_client(), image, "run `envkit build` first: syft scans the built image")
    found = scan(image)
    said = differences(made, found)
    sys.stderr.write(f"syft found {len(found)} packages in {image}; {len(said)} differ\n")
    for line in said:
        sys.stderr.write(f"  {line}\n")
    return 1 if said else 0
