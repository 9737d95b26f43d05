"""The team's key, with the real cosign: opened only with its password (never printed), and
signing.verify refused at load when the public key is not there."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from envkit.errors import ConfigError, EnvkitError
from envkit.supply import cosign
from tests.helpers import plan_text

PASSWORD = "hunter2-not-printed"
needs_cosign = pytest.mark.skipif(
    shutil.which("cosign") is None and not __import__("os").environ.get("ENVKIT_REQUIRE_DOCKER"),
    reason="cosign is installed by `make cosign`",
)


@pytest.fixture
def key_pair(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("COSIGN_PASSWORD", PASSWORD)
    subprocess.run(
        [cosign.cosign(), "generate-key-pair"], cwd=tmp_path, check=True, capture_output=True
    )
    return tmp_path


@needs_cosign
def test_a_key_opens_with_its_password_and_a_wrong_one_is_refused_unprinted(
    key_pair: Path,
) -> None:
    cosign.check_key(key_pair / "cosign.key", PASSWORD)
    with pytest.raises(EnvkitError) as refused:
        cosign.check_key(key_pair / "cosign.key", "wrong-" + PASSWORD)
    said = f"{refused.value} {refused.value.fix}"
    assert "could not open the signing key" in said and "COSIGN_PASSWORD" in said
    assert PASSWORD not in said
    with pytest.raises(EnvkitError, match=r"cosign\.key, not cosign\.pub"):
        cosign.check_key(key_pair / "cosign.pub", PASSWORD)  # the public half is no signing key
    with pytest.raises(EnvkitError, match="does not exist"):
        cosign.check_key(key_pair / "nope.key", PASSWORD)


@needs_cosign
def test_an_unreachable_registry_is_a_refusal_never_a_pass(key_pair: Path) -> None:
    reference = "127.0.0.1:9/team/demo@sha256:" + "ab" * 32  # port 9: nothing answers
    with pytest.raises(cosign.SignatureError, match="could not be checked"):
        cosign.verify(reference, key_pair / "cosign.pub")


def test_the_password_comes_from_the_environment_or_is_refused_without_a_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COSIGN_PASSWORD", "")
    assert cosign.key_password(tmp_path / "cosign.key") == ""  # a key made without one
    monkeypatch.delenv("COSIGN_PASSWORD")
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    with pytest.raises(EnvkitError, match="set COSIGN_PASSWORD"):
        cosign.key_password(tmp_path / "cosign.key")


def test_signing_verify_names_a_key_beside_envkit_yaml(tmp_path: Path) -> None:
    (tmp_path / "keys").mkdir()
    (tmp_path / "keys" / "cosign.pub").write_text("-----BEGIN PUBLIC KEY-----\n")
    plan = plan_text("name: demo\nsigning:\n  verify: keys/cosign.pub\n", tmp_path)
    assert plan.signing_key == str(tmp_path / "keys" / "cosign.pub")
    with pytest.raises(ConfigError) as missing:
        plan_text("name: demo\nsigning:\n  verify: cosign.pub\n", tmp_path)
    said = str(missing.value)
    assert "signing.verify" in said and "envkit.yaml:3:" in said and "cosign.pub" in said, said
    with pytest.raises(ConfigError, match="leaves the project"):
        plan_text("name: demo\nsigning: {verify: ../cosign.pub}\n", tmp_path)
