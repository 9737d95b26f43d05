"""How conda's tooling gets into an image that has none: which bootstrap, and what it downloads,
pinned.

Where the config routes conda's channels through a mirror (a preset other than official, or
mirrors.conda), nothing comes from GitHub or anaconda.org: py-rattler (the solver and installer
under pixi) and ruamel.yaml come from the pip mirror, pinned by hash, and envkit's own
`envkit-conda` (envkit/runtime/conda_tool.py) solves the environment from the channels in the
image's .condarc: the file the members use afterwards. Miniforge's installer is fetched from
GitHub only where the config asks for official upstreams, or from `conda.installer_url` (your
own copy) with its checksum. Both are checked before anything runs as root."""

from __future__ import annotations

from typing import Literal

CondaBootstrap = Literal["miniforge", "rattler"]

# Miniforge pinned by release and checksum: the installer runs as root in the build, so what
# is downloaded is checked before it runs (a "latest" URL could change under a rebuild).
# $(uname -m) is expanded by the build's shell. The sums are the release's published ones, as
# carried by independent packagers (AUR's miniforge PKGBUILD, nebari-docker-images).
MINIFORGE_VERSION = "25.3.0-3"
MINIFORGE_URL = (
    f"https://github.com/conda-forge/miniforge/releases/download/{MINIFORGE_VERSION}/"
    f"Miniforge3-{MINIFORGE_VERSION}-Linux-$(uname -m).sh"
)
MINIFORGE_SHA256 = (
    ("x86_64", "1b57f8cb991982063f79b56176881093abb1dc76d73fda32102afde60585b5a1"),
    ("aarch64", "ac89f17b0eec4e98d38a53d1ae688e0f22c77d8ea5b5f008c2455e90ef095339"),
)

# The rattler bootstrap's packages, with the sha256 of each wheel pip may pick (PyPI's simple
# index lists them): py-rattler's manylinux wheels for x86_64 and aarch64, ruamel.yaml's and
# pip's one pure-Python wheel each. `pip install --require-hashes` refuses anything else.
# py-rattler's wheels are abi3 for CPython 3.10 and newer, so the image's python3 must be one.
RATTLER_REQUIREMENTS = (
    (
        "py-rattler",
        "0.28.0",
        (
            "4f4ab1d34d5394e7ce130a86e59009c95ace4f5757d9c3af04de1351bcea47eb",  # x86_64
            "61b24202374188e72130f1b3dc63b455befaafc3e49e5481a38b6a6c8828c1e0",  # aarch64
        ),
    ),
    (
        "ruamel.yaml",
        "0.19.1",
        ("27592957fedf6e0b62f281e96effd28043345e0e66001f97683aa9a40c667c93",),
    ),
    # pip itself, new enough for `pip --python ENV` (22.3 and later; Ubuntu 22.04's venv has
    # 22.0): it installs a lock's PyPI packages into an environment that holds no pip.
    ("pip", "25.2", ("6d67a2b4e7f14d8b31b8b52648866fa717f45a1eb70e83002f4331d07e953717",)),
)
RATTLER_MIN_PYTHON = (3, 10)
RATTLER_VENV = "/opt/envkit/conda"  # the bootstrap's own venv, apart from every environment
CONDA_TOOL_DIR = "/opt/envkit/conda-tool"  # envkit-conda and its pinned requirements


def choose_bootstrap(routed_through_mirror: bool, own_installer: bool) -> CondaBootstrap:
    """rattler where conda's channels go through a mirror (unless the config names its own
    Miniforge installer); Miniforge, from GitHub or the config's URL, otherwise."""
    return "rattler" if routed_through_mirror and not own_installer else "miniforge"


def rattler_requirements() -> str:
    """The bootstrap's requirements file: every package pinned, every wheel's hash listed."""
    lines = []
    for name, version, sums in RATTLER_REQUIREMENTS:
        hashes = " ".join(f"--hash=sha256:{digest}" for digest in sums)
        lines.append(f"{name}=={version} {hashes}")
    return "\n".join(lines) + "\n"


def conda_bootstrap_notes(preset: str, bootstrap: CondaBootstrap | None, routed: bool) -> list[str]:
    """Where a mirror preset is set but carries no conda (a PyPI-only mirror) and nothing else
    routes conda's channels, the user is told that conda's tooling and packages come from
    upstream."""
    if bootstrap != "miniforge" or preset == "official" or routed:
        return []
    return [
        f"mirror preset {preset} carries no conda channels: Miniforge and the conda packages "
        "come from GitHub and conda-forge upstream (set mirrors.conda to a conda mirror, or "
        "pick a preset that carries conda-forge)"
    ]
