"""How the image installs its Python packages, and what BuildKit keeps between builds.

uv (the default) or pip installs torch and the user's packages, from the same index and mirror
configuration either way, spelled on each command line (uv reads no pip.conf; /etc/pip.conf is
what the box's users' own `pip install` reads). Both write into the environment's own
interpreter. uv itself lives apart (/opt/envkit/uv, installed from the mirror by `pip --target`),
so it is in no lock and in no user's `pip list`.

Cache mounts exist only under BuildKit: the same plan renders `Dockerfile` (with them) and
`Dockerfile.classic` (without), and the install commands differ only in their cache flags."""

from __future__ import annotations

import re
from dataclasses import dataclass

from envkit.config.choices import Builder, Installer
from envkit.config.model import Build
from envkit.plan.image.mirrors import PipPlan

# One template, rendered for each builder: BuildKit's with cache mounts, the classic builder's
# without (it cannot parse them).
DOCKERFILE = "Dockerfile"
CLASSIC_DOCKERFILE = "Dockerfile.classic"
UV_HOME = "/opt/envkit/uv"
UV = f"{UV_HOME}/bin/uv"
# `envkit build --offline --from BUNDLE`: the bundle's wheels and .debs, bound into every RUN
# that installs from the build context's envkit/offline/ (bundle/rebuild.py stages them there).
OFFLINE = "/envkit-offline"
OFFLINE_MOUNT = f"--mount=type=bind,source=envkit/offline,target={OFFLINE}"


@dataclass(frozen=True)
class Mount:
    """A BuildKit mount of one RUN, never part of a layer: a cache by default, kept by the
    engine across builds (sharing=locked: two builds at once wait for each other, as apt and
    conda take locks of their own inside and would fail rather than wait)."""

    id: str
    target: str
    kind: str = "cache"
    options: str = "sharing=locked"

    @property
    def flag(self) -> str:
        return f"--mount=type={self.kind},id={self.id},target={self.target},{self.options}"


UV_CACHE = Mount("envkit-uv", "/root/.cache/uv")
PIP_CACHE = Mount("envkit-pip", "/root/.cache/pip")
CONDA_PKGS = Mount("envkit-conda-pkgs", "/var/cache/envkit/conda-pkgs")
DOWNLOADS = Mount("envkit-downloads", "/var/cache/envkit/downloads")


@dataclass(frozen=True)
class InstallPlan:
    installer: Installer
    uv_version: str
    python: str  # the environment's interpreter, which the packages go into
    pip: PipPlan
    builder: Builder  # what `envkit build` uses unless --builder says otherwise
    base: str  # the FROM image: apt's caches are kept per base (another distribution's
    #            package lists and archives are of no use to this one)
    ca_bundle: str | None  # the system bundle, where envkit.yaml adds CA certificates
    offline: bool = False  # every package from the bundle bound at OFFLINE, no index asked

    # The shared mounts, here so that the template reads every path from the plan.
    uv_home = UV_HOME
    uv = UV
    pip_cache = PIP_CACHE
    conda_pkgs = CONDA_PKGS
    downloads = DOWNLOADS

    @property
    def uses_uv(self) -> bool:
        return self.installer == "uv"

    @property
    def apt_mounts(self) -> tuple[Mount, Mount]:
        slug = re.sub(r"[^a-z0-9.]+", "-", self.base.lower()).strip("-")[:80]
        return (
            Mount(f"envkit-apt-archives-{slug}", "/var/cache/apt"),
            Mount(f"envkit-apt-lists-{slug}", "/var/lib/apt/lists"),
        )

    @property
    def cache(self) -> Mount:
        """The installer's own download cache."""
        return UV_CACHE if self.uses_uv else PIP_CACHE

    @property
    def bootstrap(self) -> tuple[str, ...]:
        """pip's command that installs uv, from the mirror, apart from the environment."""
        return (*self.pip_indexes(), "--target", UV_HOME, f"uv=={self.uv_version}")

    def command(self, buildkit: bool) -> tuple[str, ...]:
        """The install command. Without BuildKit's cache mount nothing is kept: a cache written
        during a classic build would only grow the layer."""
        if self.uses_uv:
            # --link-mode copy: the cache is another mount, where hard links cannot reach.
            uv = (UV, "pip", "install", "--python", self.python, "--compile-bytecode")
            return (*uv, "--link-mode", "copy", *(() if buildkit else ("--no-cache",)))
        return ("python", "-m", "pip", "install", *(() if buildkit else ("--no-cache-dir",)))

    def indexes(
        self, first: str | None = None, only: bool = False, sources: tuple[str, ...] = ()
    ) -> tuple[str, ...]:
        """The installer's index options: the mirror's, or FIRST (the PyTorch wheel index) alone
        (ONLY) or ahead of the mirror; a project's own SOURCES (pip's --extra-index-url and
        --find-links pairs) after it. Spelled on every command line, for uv (which reads no
        pip.conf) and pip alike: /etc/pip.conf is the box's configuration for its users, and a
        mirror change does not have to rebuild the layers that came before it."""
        if self.offline:
            return self.pip_indexes()  # uv takes pip's spelling of these
        pairs = list(zip(sources[::2], sources[1::2], strict=True))
        links = tuple(word for pair in pairs if pair[0] == "--find-links" for word in pair)
        urls = [first] if first else []
        if not (first and only):
            urls += [self.pip.index_url, *self.pip.extra_index_urls]
            urls += [url for option, url in pairs if option == "--extra-index-url"]
        options = self.uv_options(urls) if self.uses_uv else self._pip_options(urls)
        return (*options, *links)

    def uv_options(self, urls: list[str] | None = None) -> tuple[str, ...]:
        """uv's spelling of URLS (the mirror's by default), whatever installs the packages."""
        urls = urls or [self.pip.index_url, *self.pip.extra_index_urls]
        args = ["--index-url", urls[0], *(w for u in urls[1:] for w in ("--extra-index-url", u))]
        if len(urls) > 1:
            # pip's rule: the best version across every index. uv's default (the first index
            # that has the name) would let the mirror's torch shadow the PyTorch index's build.
            args += ["--index-strategy", "unsafe-best-match"]
        for host in self.pip.trusted_hosts:
            args += ["--allow-insecure-host", host]
        return tuple(args)  # uv finds extra CA certificates through SSL_CERT_FILE

    def pip_indexes(self) -> tuple[str, ...]:
        """pip's options for the mirror, what /etc/pip.conf says to the box's users."""
        if self.offline:
            return ("--no-index", "--find-links", f"{OFFLINE}/wheels")
        return self._pip_options([self.pip.index_url, *self.pip.extra_index_urls])

    def _pip_options(self, urls: list[str]) -> tuple[str, ...]:
        args = ["--index-url", urls[0], *(w for u in urls[1:] for w in ("--extra-index-url", u))]
        for host in self.pip.trusted_hosts:
            args += ["--trusted-host", host]
        if self.ca_bundle:
            args += ["--cert", self.ca_bundle]
        return (*args, "--timeout=60")  # one word: hadolint reads `60` as a package otherwise


def plan_install(
    build: Build, python_bin: str, pip: PipPlan, base: str, ca_bundle: str | None
) -> InstallPlan:
    python = f"{python_bin}/python"
    return InstallPlan(build.installer, build.uv, python, pip, build.builder, base, ca_bundle)
