"""The compatibility table resolves requests and explains refusals with the valid choices."""

from __future__ import annotations

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
        compat.resolve_cuda(table, release, "11.3", need_image=False)
    assert caught.value.problem == "torch 2.4.1 has no CUDA 11.3 build"
    assert caught.value.fix == "choose 11.8, 12.1 or 12.4"


def test_partial_torch_version_means_newest_patch() -> None:
    table = compat.load_table()
    assert compat.resolve_torch(table, "2.4").version == "2.4.1"
    assert compat.resolve_torch(table, "1.13").version == "1.13.1"


def test_images_are_named_like_docker_hub_tags() -> None:
    table = compat.load_table()
    release = table.torch["1.11.0"]
    cuda = compat.resolve_cuda(table, release, "11.3", need_image=True)
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
    assert compat.resolve_cuda(table, release, None, need_image=True).version == "12.8"


@pytest.mark.parametrize(
    ("driver", "verdict"),
    [("580.82.07", "ok"), ("570.124.06", "ok"), ("535.104.05", "compat"), ("470.82.01", "too-old")],
)
def test_driver_verdicts(driver: str, verdict: str) -> None:
    table = compat.load_table()
    got, why = compat.driver_verdict(table.cuda["12.8"], driver)
    assert got == verdict
    assert driver in why


# The mission's presets: the catalogue may grow, never lose one of these.
PROMISED_PRESETS = {"official", "tuna", "bfsu", "ustc", "aliyun", "huaweicloud", "sjtu", "douban"}


def test_every_promised_preset_is_in_the_data_and_sjtu_lacks_ports() -> None:
    presets = load_presets()
    assert set(presets) >= PROMISED_PRESETS
    assert presets["tuna"].pip == "https://pypi.tuna.tsinghua.edu.cn/simple"
    assert presets["ustc"].pip == "https://mirrors.ustc.edu.cn/pypi/simple"
    assert presets["douban"].apt is None and presets["douban"].conda is None
    sjtu = presets["sjtu"].apt
    assert sjtu is not None and sjtu.url("ubuntu-ports") is None
    assert presets["ustc"].conda is not None and presets["ustc"].conda.default_channels == ()
    assert not presets["aliyun"].documented and presets["tuna"].documented
