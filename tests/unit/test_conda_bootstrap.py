"""How conda's tooling gets into an image without conda, per mirror preset: where a preset
carries conda-forge, the bootstrap and the .condarc name only that mirror's hosts (no GitHub, no
anaconda.org anywhere in the build context); official keeps Miniforge from its upstream; a
PyPI-only preset says that conda comes from upstream."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from envkit.catalog.mirrors import load_presets
from envkit.plan.image.conda_bootstrap import RATTLER_REQUIREMENTS
from envkit.render.files import render_files
from tests.helpers import plan_text, render_refused

PRESETS = sorted(load_presets())
CONDA_CONFIG = """name: speech
base: {{flavor: cuda, variant: runtime}}
torch: "2.5.1"
cuda: "12.4"
python: "3.11"
conda:
  file: environment.yml
mirrors:
  preset: {preset}
ssh: {{allow_no_keys: true}}
"""
PROJECT_ENV = "name: speech\nchannels: [conda-forge]\ndependencies:\n  - numpy=1.26\n  - scipy\n"
URL = re.compile(r"https?://[^\s\"'`)\]}]+")


def _render(tmp_path: Path, preset: str) -> tuple[dict[str, str], tuple[str, ...], str]:
    (tmp_path / "environment.yml").write_text(PROJECT_ENV)
    plan = plan_text(CONDA_CONFIG.format(preset=preset), tmp_path)
    return render_files(plan), plan.notes, str(plan.conda.bootstrap)


def _hosts(text: str) -> set[str]:
    return {urlsplit(url).hostname or "" for url in URL.findall(text)}


@pytest.mark.parametrize("preset", [p for p in PRESETS if load_presets()[p].conda is not None])
def test_a_preset_with_conda_names_only_its_own_hosts(tmp_path: Path, preset: str) -> None:
    files, notes, bootstrap = _render(tmp_path, preset)
    mirror = load_presets()[preset]
    assert mirror.conda is not None
    assert bootstrap == "rattler"
    for path, text in files.items():
        assert "github.com" not in text, path
        assert "anaconda.org" not in text, path
        assert "anaconda.com" not in text, path
    conda_host = urlsplit(mirror.conda.base).hostname
    assert _hosts(files["envkit/condarc"]) == {conda_host}
    bootstrap_run = files["Dockerfile"].split("# 3. Python")[1].split("# 4. conda")[0]
    assert "py-rattler" in files["envkit/conda/requirements.txt"]
    assert _hosts(bootstrap_run) == {urlsplit(mirror.pip).hostname}
    assert "--require-hashes" in bootstrap_run
    assert not any("carries no conda" in note for note in notes)


def test_the_bootstrap_requirements_pin_every_wheel_by_hash(tmp_path: Path) -> None:
    files, _, _ = _render(tmp_path, "tuna")
    lines = files["envkit/conda/requirements.txt"].splitlines()
    assert len(lines) == len(RATTLER_REQUIREMENTS)
    for line, (name, version, sums) in zip(lines, RATTLER_REQUIREMENTS, strict=True):
        assert line.startswith(f"{name}=={version} ")
        assert [h.split(":")[1] for h in line.split()[1:]] == list(sums)
        assert all(re.fullmatch(r"[0-9a-f]{64}", digest) for digest in sums)


def test_official_keeps_miniforge_from_its_upstream(tmp_path: Path) -> None:
    files, _, bootstrap = _render(tmp_path, "official")
    assert bootstrap == "miniforge"
    assert "github.com/conda-forge/miniforge/releases" in files["Dockerfile"]
    assert "envkit/conda/requirements.txt" not in files
    assert "custom_channels" not in files["envkit/condarc"]


def test_a_pypi_only_preset_says_conda_comes_from_upstream(tmp_path: Path) -> None:
    files, notes, bootstrap = _render(tmp_path, "douban")
    assert bootstrap == "miniforge"
    assert any("douban carries no conda channels" in note for note in notes), notes
    assert "pypi.doubanio.com" in files["Dockerfile"]


def test_a_custom_conda_mirror_uses_the_rattler_bootstrap_and_an_own_installer_miniforge(
    tmp_path: Path,
) -> None:
    (tmp_path / "environment.yml").write_text(PROJECT_ENV)
    custom = CONDA_CONFIG.format(preset="official").replace(
        "  preset: official\n", "  preset: official\n  conda: https://conda.example.org/m\n"
    )
    plan = plan_text(custom, tmp_path)
    assert plan.conda.bootstrap == "rattler"
    assert dict(plan.conda.rc.custom_channels)["conda-forge"] == "https://conda.example.org/m/cloud"
    own = CONDA_CONFIG.format(preset="tuna").replace(
        "  file: environment.yml\n",
        "  file: environment.yml\n  installer_url: https://files.example.org/Miniforge3.sh\n"
        f"  installer_sha256: {'ab' * 32}\n",
    )
    plan = plan_text(own, tmp_path)
    assert plan.conda.bootstrap == "miniforge"
    assert plan.conda.installer_url == "https://files.example.org/Miniforge3.sh"


def test_a_pytorch_image_keeps_its_own_conda(tmp_path: Path) -> None:
    plan = plan_text(
        'name: x\nbase: {flavor: pytorch}\ntorch: "2.5.1"\ncuda: "12.4"\n'
        "packages: {conda: [scipy]}\nmirrors: {preset: tuna}\nssh: {allow_no_keys: true}\n",
        tmp_path,
    )
    assert plan.conda.bootstrap is None and plan.conda.in_image
    files = render_files(plan)
    assert "envkit-conda create" not in files["Dockerfile"]
    assert "envkit/conda/requirements.txt" not in files
    assert "conda env update" in files["Dockerfile"]


def test_the_files_channels_go_through_a_custom_mirror_and_main_is_its_pkgs_main(
    tmp_path: Path,
) -> None:
    """A project file's own channels are routed, not only envkit.yaml's: `main` (Anaconda's
    main channel by name, as TorchTools' file says) is the mirror's pkgs/main, other names its
    cloud/<name>."""
    (tmp_path / "environment.yml").write_text(
        "channels: [main, bioconda]\ndependencies: [python<3.13, numpy]\n"
    )
    custom = CONDA_CONFIG.format(preset="official").replace(
        "  preset: official\n", "  preset: official\n  conda: https://conda.example.org/m\n"
    )
    routed = dict(plan_text(custom, tmp_path).conda.rc.custom_channels)
    assert routed["main"] == "https://conda.example.org/m/pkgs"  # + /main: pkgs/main
    assert routed["bioconda"] == "https://conda.example.org/m/cloud"
    tuna = dict(plan_text(CONDA_CONFIG.format(preset="tuna"), tmp_path).conda.rc.custom_channels)
    assert tuna["main"] == "https://mirrors.tuna.tsinghua.edu.cn/anaconda/pkgs"


@pytest.mark.parametrize("where", ["envkit.yaml", "environment.yml"])
def test_a_channel_the_mirror_does_not_serve_is_refused_at_render(
    tmp_path: Path, where: str
) -> None:
    """envkit-conda fetches through the mirror only: a channel the preset does not serve would
    fail the build's solve; render says so first, naming where the channel was asked."""
    channels = "channels: [conda-forge, someones-channel]\n"
    (tmp_path / "environment.yml").write_text(
        (channels if where == "environment.yml" else "") + "dependencies: [numpy]\n"
    )
    config = CONDA_CONFIG.format(preset="tuna")
    if where == "envkit.yaml":
        config = config.replace("conda:\n", "conda:\n  channels: [conda-forge, someones-channel]\n")
    (tmp_path / "envkit.yaml").write_text(config)
    stderr = render_refused(tmp_path)
    assert "channel 'someones-channel'" in stderr and "TUNA" in stderr, stderr
    assert ("conda.file" if where == "environment.yml" else "conda.channels") in stderr, stderr
    assert "mirrors.conda" in stderr  # the fix
