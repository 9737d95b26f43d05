"""Public key validation: real keys from ssh-keygen and paramiko, weak and private ones refused."""

from __future__ import annotations

import subprocess
from pathlib import Path

import paramiko
import pytest

from envkit.errors import FieldError
from envkit.plan.box.keys import parse_public_key


def _keygen(tmp_path: Path, kind: str, bits: int | None = None) -> tuple[str, str]:
    path = tmp_path / f"id_{kind}_{bits}"
    args = ["ssh-keygen", "-q", "-t", kind, "-N", "", "-C", "me@host", "-f", str(path)]
    if bits:
        args[4:4] = ["-b", str(bits)]
    subprocess.run(args, check=True)
    return Path(f"{path}.pub").read_text().strip(), path.read_text()


@pytest.mark.parametrize(("kind", "bits"), [("ed25519", None), ("ecdsa", 256), ("rsa", 3072)])
def test_accepts_modern_keys(kind: str, bits: int | None, tmp_path: Path) -> None:
    public, _ = _keygen(tmp_path, kind, bits)
    key = parse_public_key(public)
    assert key.line == public


def test_refuses_rsa_2048(tmp_path: Path) -> None:
    key = paramiko.RSAKey.generate(2048)
    with pytest.raises(FieldError, match="2048 bits is too weak"):
        parse_public_key(f"ssh-rsa {key.get_base64()} old@host")


def test_refuses_private_key_without_echoing_it(tmp_path: Path) -> None:
    _, private = _keygen(tmp_path, "ed25519")
    with pytest.raises(FieldError) as caught:
        parse_public_key(private)
    body = private.splitlines()[1]
    assert "PRIVATE" in caught.value.problem
    assert body not in caught.value.problem + caught.value.fix


def test_refuses_damaged_and_mismatched_keys(tmp_path: Path) -> None:
    public, _ = _keygen(tmp_path, "ed25519")
    kind, blob, comment = public.split(" ", 2)
    with pytest.raises(FieldError, match="damaged"):
        parse_public_key(f"{kind} {blob[:-8]}!!!! {comment}")
    with pytest.raises(FieldError, match="does not match"):
        parse_public_key(f"ecdsa-sha2-nistp256 {blob} {comment}")
    with pytest.raises(FieldError, match="control"):
        parse_public_key(f"{kind} {blob} a\x1bb")
