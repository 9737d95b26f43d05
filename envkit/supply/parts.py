"""What the image holds, read from its lock, as the parts an SBOM lists: the base image by
digest, every apt, conda and Python package with its package URL (purl) and the sums the lock
has, torch's build, and the mirrors the image was built through.

A lock knows each package exactly (it was read inside the image), which no scanner of files
does; the formats (sbom_cyclonedx.py, sbom_spdx.py) only lay these parts out."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Literal
from urllib.parse import unquote, urlsplit

from envkit.checks.programs.lockfile import Lock
from envkit.plan import Plan

Kind = Literal["base", "apt", "conda", "python"]


@dataclass(frozen=True)
class Part:
    kind: Kind
    name: str
    version: str
    purl: str | None
    hashes: tuple[tuple[str, str], ...] = ()  # (SHA-256 | MD5, hex) of this very artefact
    properties: tuple[tuple[str, str], ...] = ()  # envkit:… facts the formats have no field for


@dataclass(frozen=True)
class Inventory:
    """The image's parts and the facts about the whole of it."""

    name: str  # the project
    version: str  # sha256 of the lock: one lock, one inventory
    parts: tuple[Part, ...]
    properties: tuple[tuple[str, str], ...]  # torch's build, mirrors, config digest


def _purl(kind: str, namespace: str | None, name: str, version: str, **qualifiers: str) -> str:
    from packageurl import PackageURL

    kept = {k: v for k, v in qualifiers.items() if v}
    return str(PackageURL(kind, namespace, name, version, kept or None).to_string())


def _base(lock: Lock) -> Part:
    base = lock["base"]
    name, image_id = base.get("image", ("-",))[0], base.get("id", ("-",))[0]
    reference, _, digest = base.get("digest", ("-",))[0].partition("@")
    arch = base.get("arch", ("-",))[0]
    if not digest:  # a base from no registry: only its id names it
        return Part("base", name, image_id, None, (), (("envkit:image-id", image_id),))
    repository = reference.rsplit(":", 1)[0] if ":" in reference.rsplit("/", 1)[-1] else reference
    purl = _purl(
        "oci",
        None,
        repository.rsplit("/", 1)[-1],
        digest,
        arch=arch if arch != "-" else "",
        repository_url=repository,
    )
    return Part("base", name, digest, purl, (("SHA-256", digest.split(":", 1)[1]),))


def _distro(lock: Lock) -> str:
    """purl's namespace for dpkg packages: Ubuntu marks its own versions, Debian is the rest."""
    versions = (values[0] for values in lock["apt"].values())
    return "ubuntu" if any("ubuntu" in version for version in versions) else "debian"


def _apt(lock: Lock) -> list[Part]:
    vendor, parts = _distro(lock), []
    for key, (version, origin) in sorted(lock["apt"].items()):
        name, _, arch = key.partition(":")
        purl = _purl("deb", vendor, name, version, arch=arch)
        parts.append(Part("apt", name, version, purl, (), (("envkit:origin", origin),)))
    return parts


def _conda(lock: Lock) -> list[Part]:
    parts = []
    for name, (version_build, located) in sorted(lock["conda"].items()):
        version, _, build = version_build.rpartition("-")
        url, _, md5 = located.partition("#")
        channel = subdir = kind = ""
        if url != "-":
            channel, subdir, filename = _located(url)
            kind = "tar.bz2" if filename.endswith(".tar.bz2") else "conda"
        purl = _purl(
            "conda", None, name, version, build=build, channel=channel, subdir=subdir, type=kind
        )
        hashes = (("MD5", md5),) if md5 else ()
        properties = (("envkit:url", url),) if url != "-" else ()
        parts.append(Part("conda", name, version, purl, hashes, properties))
    return parts


def _located(url: str) -> tuple[str, str, str]:
    """A conda package URL's channel, subdir and file name."""
    path = unquote(urlsplit(url).path).rstrip("/").split("/")
    channel = urlsplit(url)._replace(path="/".join(path[:-2])).geturl()
    return channel, (path[-2] if len(path) > 1 else ""), path[-1]


def _python(lock: Lock) -> list[Part]:
    parts = []
    for name, (version, installer, sums) in sorted(lock["pip"].items()):
        properties = [("envkit:installer", installer)]
        hashes: tuple[tuple[str, str], ...] = ()
        if sums.startswith("sha256:"):
            files = [s.removeprefix("sha256:") for s in sums.split(",")]
            if len(files) == 1:
                hashes = (("SHA-256", files[0]),)
            else:  # the index serves several files (wheels per platform, an sdist) of it
                properties.append(("envkit:index-files-sha256", ",".join(files)))
        elif sums.startswith("record:"):
            properties.append(("envkit:record-sha256", sums.removeprefix("record:")))
        purl = _purl("pypi", None, name, version)
        parts.append(Part("python", name, version, purl, hashes, tuple(properties)))
    return parts


def mirror_facts(plan: Plan, lock: Lock) -> tuple[tuple[str, str], ...]:
    """Where each package manager fetched from when the image was built: apt's mirror for the
    base's own distro only, and the channels the lock's conda packages came from."""
    family = _apt_family(lock)
    facts = [
        ("envkit:mirror:apt", apt.archive_url)
        for apt in plan.apt.families
        if family in (None, apt.name)
    ]
    pip = (plan.pip.index_url, *plan.pip.extra_index_urls, plan.torch.index_url or "")
    facts += [("envkit:mirror:pip", url) for url in dict.fromkeys(pip) if url]
    urls = (located.partition("#")[0] for _, located in lock["conda"].values())
    channels = dict.fromkeys(_located(url)[0] for url in urls if url != "-")
    facts += [("envkit:mirror:conda", channel) for channel in channels]
    return tuple(facts)


def _apt_family(lock: Lock) -> str | None:
    """The base's apt family (mirrors.py's names), or None where the lock holds no dpkg."""
    if not lock["apt"]:
        return None
    distro = _distro(lock)
    arm = lock["base"].get("arch", ("-",))[0] == "arm64"
    return "ubuntu-ports" if distro == "ubuntu" and arm else distro


def inventory(lock: Lock, lock_text: str, plan: Plan) -> Inventory:
    torch = tuple(
        (f"envkit:torch:{key}", values[0])
        for key, values in sorted(lock["torch"].items())
        if values[0] != "-"
    )
    parts = (_base(lock), *_apt(lock), *_conda(lock), *_python(lock))
    digest = hashlib.sha256(lock_text.encode("utf-8")).hexdigest()
    return Inventory(plan.project, digest, parts, (*torch, *mirror_facts(plan, lock)))
