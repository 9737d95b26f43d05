"""An entry of packages.pip that needs options of its own: built without build isolation (a
CUDA extension such as flash-attn compiles against the environment's torch), or taken from a
private index first. Its credentials never go in envkit.yaml: the build reads them from the
building machine's netrc, handed to BuildKit as a secret (see docs/project-files.md)."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Discriminator, Field, Tag, model_validator

from envkit.config.fields import PipRequirement, Strict, by_shape, matching
from envkit.errors import FieldError


def _no_credentials(value: str) -> str:
    authority = value.split("//", 1)[-1].split("/", 1)[0]
    if "@" in authority:
        raise FieldError(
            "credentials in the index URL: envkit.yaml is shared, and the URL is written into "
            "the Dockerfile and the image's history",
            "write the URL without them and put them in ~/.netrc (or the file $ENVKIT_NETRC "
            "names) on the machine that builds: `machine HOST login USER password TOKEN`",
        )
    return value


URL = r"https?://[A-Za-z0-9.-]+(?::[0-9]{1,5})?(?:/[A-Za-z0-9._~%+-]+)*/?"
IndexUrl = Annotated[
    str,
    AfterValidator(_no_credentials),
    matching(
        URL, "index URL", "give the index's simple URL, e.g. 'https://pypi.example.com/simple'"
    ),
]
PageUrl = Annotated[
    str,
    AfterValidator(_no_credentials),
    matching(
        URL, "page URL", "give the page of links' URL, e.g. 'https://data.pyg.org/whl/index.html'"
    ),
]


class PipPackage(Strict):
    """A pip package installed in a layer of its own, with its own options."""

    name: PipRequirement = Field(description="The requirement, e.g. 'flash-attn==2.7.4.post1'.")
    no_build_isolation: bool = Field(
        False,
        description="Build against the environment's packages (torch, setuptools, ninja): what "
        "CUDA extensions such as flash-attn need.",
    )
    index: IndexUrl | None = Field(
        None,
        description="An index asked first for this package (credentials from the building "
        "machine's ~/.netrc or $ENVKIT_NETRC, never from envkit.yaml).",
    )
    find_links: PageUrl | None = Field(
        None,
        description="A page of links its files are found on too (pip's --find-links): JAX's "
        "CUDA jaxlib builds, PyG's and mmcv's wheel pages.",
    )

    @model_validator(mode="after")
    def _has_an_option(self) -> PipPackage:
        if not self.no_build_isolation and self.index is None and self.find_links is None:
            raise FieldError(
                "a package entry with no option of its own",
                "write the plain requirement string, or set no_build_isolation, index or "
                "find_links",
            )
        return self


PipEntry = Annotated[
    Annotated[PipRequirement, Tag("union:value")] | Annotated[PipPackage, Tag("union:mapping")],
    Discriminator(by_shape),
]


def requirement_of(entry: str | PipPackage) -> str:
    return entry.name if isinstance(entry, PipPackage) else entry
