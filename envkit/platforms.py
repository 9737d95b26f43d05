"""The platforms an image is built for, as OCI names them (`linux/amd64`, `linux/arm64`), and
the other names each architecture goes by: Debian's (`dpkg --print-architecture`), the kernel's
(`uname -m`), the wheel tags' and Kubernetes' node label. One table, so no module converts by
hand. A leaf, shared by the config, the plan, the engine and the cluster renders.

May import: errors."""

from __future__ import annotations

from dataclasses import dataclass

from envkit.errors import EnvkitError


@dataclass(frozen=True)
class Architecture:
    platform: str  # "linux/arm64": OCI's name, docker --platform, the index's entries
    arch: str  # "arm64": Debian's, Docker's and Kubernetes' kubernetes.io/arch
    machine: str  # "aarch64": uname -m, Python's platform.machine(), the wheel tags
    hardware: str  # the GPU nodes of this architecture, for people


ARCHITECTURES = (
    Architecture("linux/amd64", "amd64", "x86_64", "x86 servers"),
    Architecture("linux/arm64", "arm64", "aarch64", "Grace nodes: GH200, GB200, GB300, DGX Spark"),
)
PLATFORMS = tuple(a.platform for a in ARCHITECTURES)
_BY_NAME = {name: a for a in ARCHITECTURES for name in (a.platform, a.arch, a.machine)}
# Docker and OCI write arm64's variant (v8) or leave it out; both are the same platform.
_BY_NAME["linux/arm64/v8"] = ARCHITECTURES[1]


def architecture(name: str) -> Architecture:
    """The architecture any of its names means (linux/arm64, arm64, aarch64, linux/arm64/v8)."""
    found = _BY_NAME.get(name.strip().lower())
    if found is None:
        raise EnvkitError(
            f"{name!r} is not a platform envkit builds for", f"choose {' or '.join(PLATFORMS)}"
        )
    return found


def known(name: str) -> bool:
    return name.strip().lower() in _BY_NAME


def platform_tag(tag: str, platform: str) -> str:
    """IMAGE:TAG-arm64: one platform's image of a multi-platform build, on the engine and in
    the registry before the platforms are joined into one index under IMAGE:TAG."""
    return f"{tag}-{architecture(platform).arch}"


def this_machine() -> str:
    """This machine's platform (where no engine is asked: a login node, a render)."""
    import platform

    machine = platform.machine()
    return architecture(machine).platform if known(machine) else PLATFORMS[0]
