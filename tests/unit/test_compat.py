"""The compatibility table resolves requests and explains refusals with the valid choices."""

from __future__ import annotations

from typing import Literal

import pytest

from envkit.catalog import compat
from envkit.catalog.mirrors import load_presets
from envkit.errors import FieldError


def test_table_covers_1_11_to_newest() -> None:
    table = compat.load_table()
    versions = sorted(table.torch, key=compat.version_key)
    assert versions[0] == "1.11.0"
    assert compat.version_key(versions[-1]) >= (2, 10, 0)
    for release in table.torch.values():
        assert release.cuda, release.version
        for cuda in release.cuda:
            assert cuda in table.cuda, f"torch {release.version} names unknown CUDA {cuda}"
        for cuda in release.images:
            assert cuda in release.cuda


def test_error_offers_the_valid_choices() -> None:
    table = compat.load_table()
    release = compat.resolve_torch(table, "2.4.1")
    with pytest.raises(FieldError) as caught:
        compat.resolve_cuda(table, release, "11.3", flavor="custom")
    assert caught.value.problem == "torch 2.4.1 has no CUDA 11.3 build"
    assert caught.value.fix == "choose 11.8, 12.1 or 12.4"


def test_partial_torch_version_means_newest_patch() -> None:
    table = compat.load_table()
    assert compat.resolve_torch(table, "2.4").version == "2.4.1"
    assert compat.resolve_torch(table, "1.13").version == "1.13.1"


def test_images_are_named_like_docker_hub_tags() -> None:
    table = compat.load_table()
    release = table.torch["1.11.0"]
    cuda = compat.resolve_cuda(table, release, "11.3", flavor="pytorch")
    assert (
        compat.pytorch_image(release, cuda, "runtime")
        == "pytorch/pytorch:1.11.0-cuda11.3-cudnn8-runtime"
    )
    assert compat.nvidia_cuda_image(table.cuda["12.4"], "devel", None) == (
        "nvidia/cuda:12.4.1-cudnn-devel-ubuntu22.04"
    )
    assert compat.nvidia_cuda_image(table.cuda["11.8"], "runtime", "20.04") == (
        "nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu20.04"
    )


def test_default_cuda_is_pypis_build_not_the_newest() -> None:
    table = compat.load_table()
    release = table.torch["2.10.0"]
    assert compat.resolve_cuda(table, release, None, flavor="pytorch").version == "12.8"


@pytest.mark.parametrize(
    ("driver", "verdict"),
    [("580.82.07", "ok"), ("570.124.06", "ok"), ("535.104.05", "compat"), ("470.82.01", "too-old")],
)
def test_driver_verdicts(driver: str, verdict: str) -> None:
    table = compat.load_table()
    got, why = compat.driver_verdict(table.cuda["12.8"], driver)
    assert got == verdict
    assert driver in why


@pytest.mark.parametrize(
    ("torch", "flavor", "cuda"),
    [
        ("2.0.1", "pytorch", "11.7"),  # PyPI's 2.0.1 is cu117 (the wave-1 table said cu118)
        ("1.11.0", "custom", "10.2"),  # PyPI's 1.11 bundles CUDA 10.2
        ("1.11.0", "cuda", "11.5"),  # ... but every nvidia/cuda 10.2 tag is gone: the newest
        ("2.15.0", "custom", "13.2"),
        ("2.14.1", "pytorch", "13.0"),
    ],
)
def test_default_cuda_follows_pypi_within_what_the_flavor_can_use(
    torch: str, flavor: str, cuda: str
) -> None:
    table = compat.load_table()
    assert compat.resolve_cuda(table, table.torch[torch], None, flavor=flavor).version == cuda


def test_no_flavor_resolves_to_a_deleted_cuda_10_2_image() -> None:
    table = compat.load_table()
    with pytest.raises(FieldError) as caught:
        compat.resolve_cuda(table, table.torch["1.12.1"], "10.2", flavor="cuda")
    assert "nvidia/cuda base image" in caught.value.problem
    assert "11.3 or 11.6" in caught.value.fix
    with pytest.raises(FieldError):
        compat.nvidia_cuda_image(table.cuda["10.2"], "runtime", None)


def test_seed_era_images_are_in_the_table() -> None:
    table = compat.load_table()
    for torch, cuda in (("1.12.1", "11.6"), ("1.13.1", "11.7"), ("2.0.1", "11.8")):
        image = compat.pytorch_image(
            table.torch[torch],
            compat.resolve_cuda(table, table.torch[torch], cuda, flavor="pytorch"),
            "runtime",
        )
        assert image == f"pytorch/pytorch:{torch}-cuda{cuda}-cudnn8-runtime"


def test_a_cuda_without_a_recorded_minimum_is_judged_by_its_family_floor() -> None:
    table = compat.load_table()
    cuda = table.cuda["13.2"]
    assert cuda.min_driver is None
    assert compat.driver_verdict(cuda, "580.82.07")[0] == "compat"
    verdict, why = compat.driver_verdict(cuda, "575.57.08")
    assert verdict == "too-old" and "580.65.06" in why


@pytest.mark.parametrize(
    ("requested", "cuda", "custom_index", "source"),
    [
        ("auto", "13.0", False, "pypi"),  # PyPI's 2.14.1 is the CUDA 13.0 build
        ("auto", "13.0", True, "pytorch-index"),  # the config named its own PyTorch index
        ("pytorch-index", "13.0", False, "pytorch-index"),
        ("pypi", "13.0", False, "pypi"),
    ],
)
def test_torch_source(
    requested: Literal["auto", "pypi", "pytorch-index"], cuda: str, custom_index: bool, source: str
) -> None:
    table = compat.load_table()
    release = table.torch["2.14.1"]
    got = compat.torch_source(release, table.cuda[cuda], requested, custom_index=custom_index)
    assert got == source


def test_torch_source_pypi_refuses_a_build_pypi_does_not_carry() -> None:
    table = compat.load_table()
    release = table.torch["2.10.0"]
    assert compat.torch_source(release, table.cuda["12.6"], "auto", custom_index=False) == (
        "pytorch-index"
    )
    assert compat.torch_source(release, None, "auto", custom_index=False) == "pytorch-index"
    with pytest.raises(FieldError) as caught:
        compat.torch_source(release, table.cuda["12.6"], "pypi", custom_index=False)
    assert "CUDA 12.8 build, not the CUDA 12.6" in caught.value.problem
    assert 'cuda: "12.8"' in caught.value.fix


# The mission's presets: the catalogue may grow, never lose one of these.
PROMISED_PRESETS = {"official", "tuna", "bfsu", "ustc", "aliyun", "huaweicloud", "sjtu", "douban"}


def test_every_promised_preset_is_in_the_data() -> None:
    presets = load_presets()
    assert set(presets) >= PROMISED_PRESETS
    assert presets["tuna"].pip == "https://pypi.tuna.tsinghua.edu.cn/simple"
    assert presets["ustc"].pip == "https://mirrors.ustc.edu.cn/pypi/simple"
    assert presets["douban"].apt is None and presets["douban"].conda is None
    for name in ("sjtu", "huaweicloud"):
        apt = presets[name].apt
        assert apt is not None and apt.url("ubuntu-ports") and apt.url("debian-security")
    assert presets["ustc"].conda is not None and presets["ustc"].conda.default_channels == ()
    assert presets["aliyun"].documented and presets["tuna"].documented
    for name in ("tuna", "bfsu"):
        conda = presets[name].conda
        assert (
            conda is not None and "msys2" not in conda.cloud and "msys2" in conda.default_channels
        )


# The URL shape each archive has on every mirror that serves it: <base>/<archive>, https.
ARCHIVE_SHAPE = r"https://[a-z0-9.-]+(/[a-z0-9.-]+)*/{archive}"


@pytest.mark.parametrize("name", sorted(PROMISED_PRESETS))
def test_every_preset_url_has_its_archives_shape(name: str) -> None:
    import re

    preset = load_presets()[name]
    if preset.apt is not None:
        for archive in preset.apt.archives:
            url = preset.apt.url(archive)
            assert url and re.fullmatch(ARCHIVE_SHAPE.format(archive=archive), url), url
    assert preset.pip and re.fullmatch(r"https://[a-z0-9.-]+(/[a-z0-9.-]+)*/simple/?", preset.pip)
    if preset.conda is not None:
        assert re.fullmatch(r"https://[a-z0-9.-]+(/[a-z0-9.-]+)*/anaconda", preset.conda.base)
