"""Validation of SSH public keys: the only key material envkit ever handles.

A private key pasted or pointed to by mistake is refused, and its text is never echoed, copied or
written anywhere. RSA keys below 3072 bits are refused (NIST SP 800-57 sunsets 2048-bit RSA).
"""

from __future__ import annotations

import base64
import binascii
import re
import struct
from dataclasses import dataclass

from envkit.errors import FieldError

MIN_RSA_BITS = 3072
KEY_TYPES = (
    "ssh-ed25519",
    "ecdsa-sha2-nistp256",
    "ecdsa-sha2-nistp384",
    "ecdsa-sha2-nistp521",
    "ssh-rsa",
    "sk-ssh-ed25519@openssh.com",
    "sk-ecdsa-sha2-nistp256@openssh.com",
)
_COMMENT = re.compile(r"[\x20-\x7e]*")


@dataclass(frozen=True)
class PublicKey:
    kind: str
    blob: str  # base64, as in authorized_keys
    comment: str

    @property
    def line(self) -> str:
        return f"{self.kind} {self.blob} {self.comment}".rstrip()


def looks_private(text: str) -> bool:
    return "PRIVATE KEY" in text or text.lstrip().startswith("-----BEGIN")


def _read_string(blob: bytes, offset: int) -> tuple[bytes, int]:
    if offset + 4 > len(blob):
        raise ValueError("truncated")
    (length,) = struct.unpack(">I", blob[offset : offset + 4])
    end = offset + 4 + length
    if end > len(blob):
        raise ValueError("truncated")
    return blob[offset + 4 : end], end


def _refuse_unknown_type(text: str) -> None:
    if any(word in KEY_TYPES for word in text.split()[1:]):
        raise FieldError(
            "authorized_keys options (command=, from=, no-pty, ...) are not accepted: envkit "
            "writes each key's file itself",
            "give the bare key: 'ssh-ed25519 AAAAC3... you@host'",
        )
    # The first word is not echoed: a wrong file or paste may hold a secret.
    raise FieldError(
        "not an SSH public key of a supported type",
        f"give one of {', '.join(sorted(KEY_TYPES))} (ssh-keygen -t ed25519 makes one)",
    )


def parse_public_key(text: str) -> PublicKey:
    """Parse one authorized_keys-style line, or raise FieldError saying what is wrong."""
    if looks_private(text):
        raise FieldError(
            "this is a PRIVATE key; it was not stored or copied anywhere",
            "give the public half instead: the contents of the matching .pub file "
            "(ssh-keygen -y -f KEY prints it)",
        )
    parts = text.strip().split(None, 2)
    fix = "paste one line of a .pub file: 'ssh-ed25519 AAAAC3... you@host'"
    if len(parts) < 2:
        raise FieldError("not an SSH public key", fix)
    kind, b64 = parts[0], parts[1]
    comment = parts[2].strip() if len(parts) == 3 else ""
    if kind not in KEY_TYPES:
        _refuse_unknown_type(text)
    try:
        blob = base64.b64decode(b64, validate=True)
        embedded, _ = _read_string(blob, 0)
    except (binascii.Error, ValueError):
        raise FieldError("the key's base64 body is damaged", fix) from None
    if embedded.decode("ascii", "replace") != kind:
        raise FieldError("the key's type does not match its body", fix)
    if not _COMMENT.fullmatch(comment):
        raise FieldError("the key's comment has control or non-ASCII characters", fix)
    if kind == "ssh-rsa":
        try:
            _exponent, offset = _read_string(blob, _read_string(blob, 0)[1])
            modulus, _ = _read_string(blob, offset)
        except ValueError:
            raise FieldError("the RSA key's body is damaged", fix) from None
        bits = int.from_bytes(modulus, "big").bit_length()
        if bits < MIN_RSA_BITS:
            raise FieldError(
                f"RSA key of {bits} bits is too weak (minimum {MIN_RSA_BITS})",
                "make an ed25519 key: ssh-keygen -t ed25519",
            )
    return PublicKey(kind=kind, blob=b64, comment=comment)
