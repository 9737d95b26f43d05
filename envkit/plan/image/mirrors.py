"""Concrete mirror URLs per ecosystem: apt families, pip index, conda channels."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

from envkit.catalog.mirrors import APT_ARCHIVES, AptMirror, CondaMirror, MirrorPreset, load_presets
from envkit.config.model import Conda, Mirrors
from envkit.errors import FieldError

# Anaconda's channels a mirror root serves as pkgs/<name> (defaults is these three).
ANACONDA = ("main", "r", "msys2")

OFFICIAL_APT = {
    "debian": ("http://deb.debian.org/debian", "http://deb.debian.org/debian-security"),
    "ubuntu": ("http://archive.ubuntu.com/ubuntu", "http://security.ubuntu.com/ubuntu"),
    "ubuntu-ports": (
        "http://ports.ubuntu.com/ubuntu-ports",
        "http://ports.ubuntu.com/ubuntu-ports",
    ),
}
DistroFamily = Literal["debian", "ubuntu", "ubuntu-ports"]
KEYRINGS: dict[DistroFamily, str] = {
    "debian": "/usr/share/keyrings/debian-archive-keyring.gpg",
    "ubuntu": "/usr/share/keyrings/ubuntu-archive-keyring.gpg",
    "ubuntu-ports": "/usr/share/keyrings/ubuntu-archive-keyring.gpg",
}


@dataclass(frozen=True)
class AptFamily:
    """One distro family's sources: rendered both as sources.list and as deb822."""

    name: DistroFamily
    archive_url: str
    security_url: str
    security_official: bool
    suites: tuple[str, ...]  # with @CODENAME@ replaced inside the build
    security_suite: str
    components: tuple[str, ...]
    keyring: str


@dataclass(frozen=True)
class AptPlan:
    mirror_title: str | None  # None: the base image's sources are kept untouched
    families: tuple[AptFamily, ...]
    documented: bool

    @property
    def points_at(self) -> str:
        """What apt's sources name, in words (apt-mirror.sh's first line)."""
        return self.mirror_title or "the base image's own sources"


@dataclass(frozen=True)
class PipPlan:
    index_url: str
    extra_index_urls: tuple[str, ...]
    trusted_hosts: tuple[str, ...]
    mirror_title: str


@dataclass(frozen=True)
class CondaRc:
    channels: tuple[str, ...]  # () = the base image's own channels are kept
    default_channels: tuple[str, ...]
    custom_channels: tuple[tuple[str, str], ...]
    mirror_title: str

    @property
    def path(self) -> str:
        """Where the image gets it: replacing the base's .condarc when the config names the
        channels (list keys merge across rc files, so an inherited `defaults` would survive);
        else beside it in condarc.d, so the base's channels stay and only the routing is added."""
        return "/opt/conda/.condarc" if self.channels else "/opt/conda/condarc.d/envkit.yml"

    @property
    def routed(self) -> bool:
        """Conda's channels go through a mirror (its default or custom channels)."""
        return bool(self.custom_channels or self.default_channels)


def plan_apt(mirrors: Mirrors) -> AptPlan:
    preset = load_presets()[mirrors.preset]
    source, title, documented = preset.apt, preset.title, preset.documented
    if mirrors.apt is not None:
        source = AptMirror(mirrors.apt.rstrip("/"), APT_ARCHIVES)
        title, documented = f"custom ({mirrors.apt})", True
    if source is None:
        return AptPlan(mirror_title=None, families=(), documented=True)
    families = []
    for name in ("debian", "ubuntu", "ubuntu-ports"):
        url = source.url(name)
        if url is None:
            continue  # the mirror lacks it: the image keeps its own sources for this family
        security_archive = "debian-security" if name == "debian" else name
        mirror_security = source.url(security_archive)
        use_mirror = mirrors.apt_security == "mirror" and mirror_security is not None
        security = mirror_security if use_mirror and mirror_security else OFFICIAL_APT[name][1]
        is_debian = name == "debian"
        families.append(
            AptFamily(
                name=name,
                archive_url=url,
                security_url=security,
                security_official=not use_mirror,
                suites=("@CODENAME@", "@CODENAME@-updates")
                + (() if is_debian else ("@CODENAME@-backports",)),
                security_suite="@CODENAME@-security",
                components=mirrors.debian_components if is_debian else mirrors.ubuntu_components,
                keyring=KEYRINGS[name],
            )
        )
    return AptPlan(mirror_title=title, families=tuple(families), documented=documented)


def plan_pip(mirrors: Mirrors) -> PipPlan:
    preset = load_presets()[mirrors.preset]
    index = mirrors.pip or preset.pip or "https://pypi.org/simple"
    title = f"custom ({mirrors.pip})" if mirrors.pip else preset.title
    urls = (index, *mirrors.extra_index_urls)
    # pip ignores a plain-http index unless its host is trusted; say so explicitly.
    trusted = list(mirrors.trusted_hosts)
    for url in urls:
        host = urlsplit(url).netloc
        if url.startswith("http://") and host not in trusted:
            trusted.append(host)
    return PipPlan(index, tuple(mirrors.extra_index_urls), tuple(trusted), title)


def _conda_source(
    mirrors: Mirrors, preset: MirrorPreset, channels: tuple[str, ...]
) -> CondaMirror | None:
    if mirrors.conda is not None:
        named = tuple(
            c for c in channels if "://" not in c and c not in ("defaults", "nodefaults", *ANACONDA)
        )
        return CondaMirror(mirrors.conda.rstrip("/"), ANACONDA, named)
    return preset.conda


def plan_condarc(
    mirrors: Mirrors,
    conda: Conda | None,
    *,
    base_has_conda: bool,
    file_channels: tuple[str, ...] = (),
) -> CondaRc:
    """Like the seed's .condarc: conda's default channels (main, r, msys2 where served) and every
    custom channel the mirror serves go through it, so `conda install -c pytorch` inside the box
    uses the mirror too. The channel list itself is the config's when it names one; else a base
    image's own is kept (a pytorch image's), and Miniforge's conda-forge is used. The project
    file's channels are routed too (they are in its environment, not the .condarc's list)."""
    preset = load_presets()[mirrors.preset]
    explicit = conda is not None and "channels" in conda.model_fields_set
    channels = conda.channels if conda else ("conda-forge",)
    source = _conda_source(mirrors, preset, (*channels, *file_channels))
    title = f"custom ({mirrors.conda})" if mirrors.conda else preset.title
    default_channels: tuple[str, ...] = ()
    custom: list[tuple[str, str]] = []
    if source is not None:
        if "defaults" in channels and not source.default_channels:
            raise FieldError(
                f"mirror preset {mirrors.preset} does not carry Anaconda's defaults channels",
                "use conda-forge instead of defaults (free to use), or pick tuna or bfsu",
            )
        default_channels = tuple(f"{source.base}/pkgs/{c}" for c in source.default_channels)
        served = dict.fromkeys((*source.cloud, *(c for c in channels if c in source.cloud)))
        custom = [(c, f"{source.base}/cloud") for c in served]
        # Anaconda's own channels by name (`channels: [main]`): conda would ask
        # conda.anaconda.org/main, upstream; the mirror carries them as pkgs/<name>.
        wanted = (*channels, *file_channels)
        custom += [
            (c, f"{source.base}/pkgs")
            for c in source.default_channels
            if c in wanted and c not in served
        ]
    keep_base = base_has_conda and not explicit
    rc_channels = () if keep_base else tuple(c for c in channels if c != "nodefaults")
    return CondaRc(rc_channels, default_channels, tuple(custom), title if source else preset.title)
