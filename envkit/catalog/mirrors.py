"""Mirror presets per ecosystem (apt, pip, conda), from the mirrors' own help pages."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from urllib.parse import urlsplit

from envkit.catalog.compat import load_yaml

APT_ARCHIVES = ("debian", "debian-security", "ubuntu", "ubuntu-ports")


@dataclass(frozen=True)
class AptMirror:
    base: str
    archives: tuple[str, ...]

    def url(self, archive: str) -> str | None:
        return f"{self.base}/{archive}" if archive in self.archives else None


@dataclass(frozen=True)
class CondaMirror:
    base: str
    default_channels: tuple[str, ...]  # pkgs/<name> channels the mirror carries
    cloud: tuple[str, ...]  # channels served at <base>/cloud/<channel>


@dataclass(frozen=True)
class MirrorPreset:
    name: str
    title: str
    help: str
    documented: bool
    apt: AptMirror | None
    pip: str | None
    conda: CondaMirror | None


@cache
def load_presets() -> dict[str, MirrorPreset]:
    raw = load_yaml("mirrors.yaml")
    presets = {}
    for name, row in raw["presets"].items():
        apt = row.get("apt")
        conda = row.get("conda")
        presets[name] = MirrorPreset(
            name=name,
            title=row["title"],
            help=row["help"],
            documented=bool(row["documented"]),
            apt=AptMirror(apt["base"], tuple(apt["archives"])) if apt else None,
            pip=row.get("pip"),
            conda=(
                CondaMirror(conda["base"], tuple(conda["default_channels"]), tuple(conda["cloud"]))
                if conda
                else None
            ),
        )
    return presets


def preset_names() -> tuple[str, ...]:
    """Every preset's name, in the catalogue's order: the one list (config, init, compat)."""
    return tuple(load_presets())


@cache
def preset_hosts() -> frozenset[str]:
    """Every host a preset points at: all serve https, so none belongs in pip's trusted-host."""
    presets = load_presets().values()
    apt = [p.apt.base for p in presets if p.apt]
    conda = [p.conda.base for p in presets if p.conda]
    urls = [*apt, *(p.pip for p in presets), *conda]
    return frozenset(urlsplit(url).hostname or "" for url in urls if url) - {""}
