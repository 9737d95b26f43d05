"""The rendered apt-mirror.sh, run with sh on copies of the real sources files of Debian 11/12
and Ubuntu 20.04/22.04/24.04: the right file is rewritten line by line as expected, the rest
untouched."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from envkit.render.files import render_files
from tests.helpers import REPO, plan_text

DATA = REPO / "tests" / "data" / "apt"
TUNA = "https://mirrors.tuna.tsinghua.edu.cn"


def _rootfs(distro: str, tmp_path: Path) -> Path:
    root = tmp_path / "root"
    shutil.copytree(DATA / distro, root)
    return root


def _apt_dir(tmp_path: Path, yaml_text: str) -> Path:
    files = render_files(plan_text(yaml_text, tmp_path))
    out = tmp_path / "render"
    for rel, text in files.items():
        if rel.startswith("envkit/apt/"):
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            (out / rel).write_text(text)
    return out / "envkit" / "apt"


def _run(
    apt_dir: Path, root: Path, arch: str = "amd64", certs: bool = True
) -> subprocess.CompletedProcess[str]:
    if certs:
        (root / "etc/ssl/certs").mkdir(parents=True, exist_ok=True)
        (root / "etc/ssl/certs/ca-certificates.crt").write_text("cert\n")
    log = root.parent / "apt-get.log"
    fake = root.parent / "fake-apt-get"
    # The fake apt-get records which sources it saw, proving the http bootstrap happened first.
    fake.write_text(
        f'#!/bin/sh\necho "$*" >> {log}\ncat {root}/etc/apt/sources.list '
        f"{root}/etc/apt/sources.list.d/*.sources >> {log} 2>/dev/null\nexit 0\n"
    )
    fake.chmod(0o755)
    env = {**os.environ, "ENVKIT_ROOT": str(root), "ENVKIT_ARCH": arch, "ENVKIT_APT_GET": str(fake)}
    return subprocess.run(
        ["sh", str(apt_dir / "apt-mirror.sh")], env=env, capture_output=True, text=True, check=True
    )


def _lines(path: Path) -> list[str]:
    return [ln for ln in path.read_text().splitlines() if ln and not ln.startswith("#")]


TUNA_CONFIG = "name: a\nmirrors:\n  preset: tuna\n"


@pytest.mark.parametrize(("distro", "codename"), [("debian-11", "bullseye")])
def test_debian_classic_sources_list(distro: str, codename: str, tmp_path: Path) -> None:
    root = _rootfs(distro, tmp_path)
    _run(_apt_dir(tmp_path, TUNA_CONFIG), root)
    assert _lines(root / "etc/apt/sources.list") == [
        f"deb {TUNA}/debian {codename} main",
        f"deb {TUNA}/debian {codename}-updates main",
        f"deb http://deb.debian.org/debian-security {codename}-security main",
    ]
    assert not (root / "etc/apt/sources.list.d/debian.sources").exists()


def test_debian_12_deb822(tmp_path: Path) -> None:
    root = _rootfs("debian-12", tmp_path)
    _run(_apt_dir(tmp_path, TUNA_CONFIG), root)
    assert _lines(root / "etc/apt/sources.list.d/debian.sources") == [
        "Types: deb",
        f"URIs: {TUNA}/debian",
        "Suites: bookworm bookworm-updates",
        "Components: main",
        "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg",
        "Types: deb",
        "URIs: http://deb.debian.org/debian-security",
        "Suites: bookworm-security",
        "Components: main",
        "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg",
    ]
    assert not (root / "etc/apt/sources.list").exists(), "no second, duplicate sources file"


@pytest.mark.parametrize(
    ("distro", "codename"), [("ubuntu-20.04", "focal"), ("ubuntu-22.04", "jammy")]
)
def test_ubuntu_classic_sources_list(distro: str, codename: str, tmp_path: Path) -> None:
    root = _rootfs(distro, tmp_path)
    _run(_apt_dir(tmp_path, TUNA_CONFIG), root)
    comps = "main restricted universe multiverse"
    assert _lines(root / "etc/apt/sources.list") == [
        f"deb {TUNA}/ubuntu {codename} {comps}",
        f"deb {TUNA}/ubuntu {codename}-updates {comps}",
        f"deb {TUNA}/ubuntu {codename}-backports {comps}",
        f"deb http://security.ubuntu.com/ubuntu {codename}-security {comps}",
    ]


def test_ubuntu_24_04_deb822_and_stub_untouched(tmp_path: Path) -> None:
    root = _rootfs("ubuntu-24.04", tmp_path)
    stub = (root / "etc/apt/sources.list").read_text()
    _run(_apt_dir(tmp_path, TUNA_CONFIG), root)
    assert (root / "etc/apt/sources.list").read_text() == stub
    lines = _lines(root / "etc/apt/sources.list.d/ubuntu.sources")
    assert lines[:3] == [
        "Types: deb",
        f"URIs: {TUNA}/ubuntu",
        "Suites: noble noble-updates noble-backports",
    ]
    assert "URIs: http://security.ubuntu.com/ubuntu" in lines
    assert "Suites: noble-security" in lines


def test_ubuntu_arm64_uses_ports(tmp_path: Path) -> None:
    root = _rootfs("ubuntu-22.04", tmp_path)
    _run(_apt_dir(tmp_path, TUNA_CONFIG), root, arch="arm64")
    lines = _lines(root / "etc/apt/sources.list")
    assert lines[0] == f"deb {TUNA}/ubuntu-ports jammy main restricted universe multiverse"
    assert lines[-1].startswith("deb http://ports.ubuntu.com/ubuntu-ports jammy-security")


def test_security_from_mirror_when_asked(tmp_path: Path) -> None:
    root = _rootfs("debian-12", tmp_path)
    _run(_apt_dir(tmp_path, TUNA_CONFIG + "  apt_security: mirror\n"), root)
    assert f"URIs: {TUNA}/debian-security" in _lines(root / "etc/apt/sources.list.d/debian.sources")


def test_mirror_without_ports_keeps_image_sources(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every preset carries ubuntu-ports today; one that did not (as SJTU's pages once read)
    # must leave the image's own sources for it.
    import dataclasses

    from envkit.catalog.mirrors import load_presets

    sjtu = load_presets()["sjtu"]
    assert sjtu.apt is not None
    apt = dataclasses.replace(sjtu.apt, archives=("debian", "debian-security", "ubuntu"))
    monkeypatch.setitem(load_presets(), "sjtu", dataclasses.replace(sjtu, apt=apt))
    root = _rootfs("ubuntu-22.04", tmp_path)
    before = (root / "etc/apt/sources.list").read_text()
    result = _run(_apt_dir(tmp_path, "name: a\nmirrors:\n  preset: sjtu\n"), root, arch="arm64")
    assert (root / "etc/apt/sources.list").read_text() == before
    assert "no ubuntu-ports archive" in result.stderr


def test_https_is_bootstrapped_over_http_without_certificates(tmp_path: Path) -> None:
    root = _rootfs("debian-11", tmp_path)
    _run(_apt_dir(tmp_path, TUNA_CONFIG), root, certs=False)
    log = (tmp_path / "apt-get.log").read_text()
    assert log.index("update") < log.index("install -y --no-install-recommends ca-certificates")
    assert "deb http://mirrors.tuna.tsinghua.edu.cn/debian bullseye main" in log
    assert "https://" not in log.split("install")[0], "bootstrap sources must be plain http"
    assert _lines(root / "etc/apt/sources.list")[0] == f"deb {TUNA}/debian bullseye main"


def test_official_preset_changes_nothing(tmp_path: Path) -> None:
    root = _rootfs("ubuntu-22.04", tmp_path)
    before = (root / "etc/apt/sources.list").read_text()
    _run(_apt_dir(tmp_path, "name: a\n"), root)
    assert (root / "etc/apt/sources.list").read_text() == before


def test_custom_apt_url(tmp_path: Path) -> None:
    root = _rootfs("debian-12", tmp_path)
    _run(_apt_dir(tmp_path, "name: a\nmirrors:\n  apt: http://127.0.0.1:3142\n"), root)
    assert "URIs: http://127.0.0.1:3142/debian" in _lines(
        root / "etc/apt/sources.list.d/debian.sources"
    )
