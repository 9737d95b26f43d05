"""`python:` in envkit.yaml: a version ('3.11'), or a mapping that also names the project whose
pyproject.toml the image installs (and its uv.lock, exactly, when there is one)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Discriminator, Field, Tag

from envkit.config.fields import PythonVersion, Strict, by_shape, check_project_path, matching


def _check_folder(value: str) -> str:
    """'.' (the folder of envkit.yaml), else the same rule as every project path."""
    return value if value == "." else check_project_path(value.rstrip("/"))


ProjectFolder = Annotated[str, AfterValidator(_check_folder)]
ExtraName = Annotated[
    str,
    matching(
        r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,62}[A-Za-z0-9])?",
        "extra name",
        "name one of [project.optional-dependencies] in pyproject.toml, e.g. 'train'",
    ),
]


class PythonSection(Strict):
    """Python's version and the project's own pyproject.toml."""

    version: PythonVersion | None = Field(
        None, description="Python for flavors cuda/custom (Miniforge); pytorch images fix it."
    )
    project: ProjectFolder | None = Field(
        None,
        description="Folder of the project's pyproject.toml (relative to envkit.yaml, e.g. '.'): "
        "its dependencies are installed, exactly as uv.lock pins them when there is one.",
    )
    extras: tuple[ExtraName, ...] = Field(
        (), description="[project.optional-dependencies] groups installed too."
    )
    groups: tuple[ExtraName, ...] = Field(
        (),
        description="Dependency groups installed too: [dependency-groups] (PEP 735: uv's, "
        "PDM's), PDM's [tool.pdm.dev-dependencies], Poetry's [tool.poetry.group.NAME].",
    )
    install: Literal["dependencies", "editable"] = Field(
        "dependencies",
        description="dependencies: the image holds what the project needs; editable: the project "
        "itself too (a uv workspace's members with it), installed editable from the mounted "
        "workspace at the container's first start (your edits take effect without a rebuild).",
    )


PythonField = Annotated[
    Annotated[PythonVersion, Tag("union:value")] | Annotated[PythonSection, Tag("union:mapping")],
    Discriminator(by_shape),
]


def python_version(value: str | PythonSection | None) -> str | None:
    return value.version if isinstance(value, PythonSection) else value
