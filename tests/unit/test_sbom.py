"""The SBOM from a lock: every package with its purl and sums, valid against the formats' own
schemas (read back by their own libraries), the same bytes for the same lock."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from envkit.checks.programs.lockfile import empty_lock, format_lock, parse_lock
from envkit.plan import Plan
from envkit.supply.parts import Inventory, inventory
from envkit.supply.sbom_cyclonedx import cyclonedx_json
from envkit.supply.sbom_spdx import spdx_json
from envkit.supply.syft_check import Found, differences
from tests.helpers import plan_text

SHA = "ab" * 32
MD5 = "0123456789abcdef0123456789abcdef"
BASE_DIGEST = "sha256:" + "cd" * 32


def _lock_text() -> str:
    lock = empty_lock()
    lock["base"] = {
        "image": ("debian:bookworm",),
        "id": ("sha256:" + "ef" * 32,),
        "digest": (f"docker.io/library/debian@{BASE_DIGEST}",),
        "arch": ("amd64",),
        "conda-prefix": ("-",),
    }
    lock["apt"] = {
        "libc6:amd64": ("2.36-9+deb12u4", "base"),
        "openssh-server:amd64": ("1:9.2p1-2+deb12u3", "added"),
        "tzdata:all": ("2024a-0+deb12u1", "base"),
    }
    lock["conda"] = {
        "libzlib": (
            "1.3.1-hb9d3cd8_2",
            f"https://conda.anaconda.org/conda-forge/linux-64/libzlib-1.3.1-hb9d3cd8_2.conda#{MD5}",
        ),
    }
    lock["pip"] = {
        "numpy": ("1.26.4", "uv", f"sha256:{SHA}"),
        "Typing_Extensions": ("4.12.2", "pip", f"sha256:{SHA},sha256:{'12' * 32}"),
        "torch": ("2.5.1+cpu", "debian", "record:" + "34" * 32),
    }
    lock["torch"] = {"torch": ("2.5.1+cpu",), "cuda": ("-",), "cudnn": ("-",), "nccl": ("-",)}
    return format_lock(lock)


@pytest.fixture
def plan(tmp_path: Path) -> Plan:
    return plan_text("name: sbomdemo\nmirrors: {preset: tuna}\n", tmp_path)


@pytest.fixture
def made(plan: Plan) -> Inventory:
    text = _lock_text()
    return inventory(parse_lock(text), text, plan)


def test_every_locked_package_is_a_part_with_its_purl_and_sums(made: Inventory) -> None:
    by_purl = {part.purl: part for part in made.parts}
    assert f"pkg:oci/debian@{BASE_DIGEST}?arch=amd64&repository_url=docker.io/library/debian" in (
        by_purl
    )
    assert "pkg:deb/debian/openssh-server@1:9.2p1-2%2Bdeb12u3?arch=amd64" in by_purl
    assert "pkg:deb/debian/tzdata@2024a-0%2Bdeb12u1?arch=all" in by_purl
    conda = next(p for p in made.parts if p.kind == "conda")
    assert conda.purl == (
        "pkg:conda/libzlib@1.3.1?build=hb9d3cd8_2&channel=https://conda.anaconda.org/conda-forge"
        "&subdir=linux-64&type=conda"
    )
    assert conda.hashes == (("MD5", MD5),)
    numpy = by_purl["pkg:pypi/numpy@1.26.4"]
    assert numpy.hashes == (("SHA-256", SHA),) and ("envkit:installer", "uv") in numpy.properties
    # Several files served for one version: none of them is *the* artefact, so no hash claims it.
    typing = by_purl["pkg:pypi/typing-extensions@4.12.2"]
    assert typing.hashes == () and any(
        k == "envkit:index-files-sha256" for k, _ in typing.properties
    )
    assert len(made.parts) == 1 + 3 + 1 + 3
    assert ("envkit:torch:torch", "2.5.1+cpu") in made.properties
    assert not any(k == "envkit:torch:cuda" for k, _ in made.properties), "'-' is no reading"
    mirrors = dict(made.properties)
    assert "tuna" in mirrors["envkit:mirror:pip"] and "tuna" in mirrors["envkit:mirror:apt"]
    apt = [url for key, url in made.properties if key == "envkit:mirror:apt"]
    assert apt == ["https://mirrors.tuna.tsinghua.edu.cn/debian"], "Debian's only, not Ubuntu's"
    channels = [url for key, url in made.properties if key == "envkit:mirror:conda"]
    assert channels == ["https://conda.anaconda.org/conda-forge"], "where the lock's came from"


def test_no_conda_packages_no_conda_mirror(plan: Plan) -> None:
    text = _lock_text().replace("libzlib", "unused")
    lock = parse_lock(text)
    lock["conda"] = {}
    made = inventory(lock, text, plan)
    assert not any(key == "envkit:mirror:conda" for key, _ in made.properties)


def test_cyclonedx_is_valid_1_6_and_the_same_bytes_for_the_same_lock(
    made: Inventory, plan: Plan
) -> None:
    from cyclonedx.schema import SchemaVersion
    from cyclonedx.validation.json import JsonStrictValidator

    text = cyclonedx_json(made)
    assert JsonStrictValidator(SchemaVersion.V1_6).validate_str(text) is None
    document = json.loads(text)
    assert document["specVersion"] == "1.6"
    purls = {c.get("purl") for c in document["components"]}
    assert {p.purl for p in made.parts} <= purls
    numpy = next(c for c in document["components"] if c["name"] == "numpy")
    assert numpy["hashes"] == [{"alg": "SHA-256", "content": SHA}]
    assert text == cyclonedx_json(made)
    other = _lock_text().replace("1.26.4", "1.26.5")
    changed = cyclonedx_json(inventory(parse_lock(other), other, plan))
    assert json.loads(changed)["serialNumber"] != document["serialNumber"]


def test_spdx_is_valid_2_3_read_back_by_spdx_tools_and_reproducible(
    made: Inventory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from spdx_tools.spdx.parser.parse_anything import parse_file
    from spdx_tools.spdx.validation.document_validator import validate_full_spdx_document

    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    text = spdx_json(made)
    assert text == spdx_json(made)
    path = tmp_path / "image.spdx.json"
    path.write_text(text)
    document = parse_file(str(path))
    assert validate_full_spdx_document(document) == []
    assert document.creation_info.created.year == 2023
    names = {package.name for package in document.packages}
    assert {"numpy", "openssh-server", "libzlib", "debian:bookworm"} <= names
    contained = [r for r in document.relationships if r.spdx_element_id == "SPDXRef-Image"]
    assert len(contained) == len(made.parts)


def test_syft_findings_outside_the_lock_or_at_another_version_are_each_said(
    made: Inventory,
) -> None:
    found = [
        Found("apt", "openssh-server", "1:9.2p1-2+deb12u3", "/var/lib/dpkg/status"),
        Found("python", "typing_extensions", "4.12.2", "/opt/venv/lib/site-packages"),
        Found("python", "numpy", "1.24.2", "/usr/lib/python3/dist-packages/numpy.egg-info"),
        Found("python", "pip", "23.0.1", "/usr/lib/python3/dist-packages/pip.dist-info"),
        Found("python", "six", "1.16", "/usr/lib/python3/dist-packages/pip/_vendor/six.py"),
        Found("rust-crate", "serde", "1.0.1", "/opt/envkit/uv/bin/uv"),
    ]
    said = differences(made, found)
    assert len(said) == 4, said
    assert "numpy: syft read 1.24.2 at /usr/lib/python3/dist-packages" in said[0]
    assert "the lock has 1.26.4" in said[0]
    assert said[1].startswith("python pip 23.0.1: found by syft at /usr/lib/python3")
    assert said[1].endswith("installed outside the environment's Python and dpkg's database")
    assert said[2].endswith("vendored inside another package, which the lock holds")
    assert said[3].endswith(
        "a rust-crate package read from inside a file another package installed"
    )


def test_a_layers_paths_keep_their_own_leading_dots() -> None:
    """`envkit diff --layers` names `/.wh.cache` (a whiteout) and `/etc/.pwd.lock` as they are:
    only tar's "./" prefix goes."""
    import io
    import tarfile

    from envkit.supply.image_diff import _entries

    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w") as layer:
        for name in ("./.wh.cache", "etc/.pwd.lock", "./usr/bin/python3"):
            layer.addfile(tarfile.TarInfo(name), io.BytesIO(b""))
    data.seek(0)
    with tarfile.open(fileobj=data) as layer:
        assert set(_entries(layer)) == {"/.wh.cache", "/etc/.pwd.lock", "/usr/bin/python3"}
