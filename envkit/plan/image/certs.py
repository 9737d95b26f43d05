"""Extra CA certificates (a TLS-inspecting proxy's, a private mirror's): public, validated, and
trusted by apt, pip, conda and requests in the image."""

from __future__ import annotations

import re
from dataclasses import dataclass

from envkit.config.load import LoadedSpec
from envkit.errors import FieldError
from envkit.files import read_regular

_PEM = re.compile(r"-----BEGIN CERTIFICATE-----\s+[A-Za-z0-9+/=\s]+?-----END CERTIFICATE-----")
SYSTEM_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"
CA_FILE_LIMIT = 1024 * 1024  # a whole system bundle is about 200 KB


@dataclass(frozen=True)
class CaCert:
    name: str  # file name inside the build context: envkit/ca/<name>
    pem: str


def _read(loaded: LoadedSpec, index: int, raw: str) -> CaCert:
    path = loaded.user_path(raw)
    with loaded.blaming(("mirrors", "ca_certificates", index), raw):
        try:
            text = read_regular(
                path, CA_FILE_LIMIT, "CA certificate file", " (PEM, relative to envkit.yaml)"
            ).decode("ascii")
        except UnicodeDecodeError:
            raise FieldError(
                f"{path} is not a PEM file (it holds non-ASCII bytes)",
                "point to a PEM certificate file (-----BEGIN CERTIFICATE-----)",
            ) from None
        if "PRIVATE KEY" in text:
            raise FieldError(
                f"{path} holds a PRIVATE key; it was not copied anywhere",
                "give only the CA's certificate (-----BEGIN CERTIFICATE-----)",
            )
        blocks = _PEM.findall(text)
        if not blocks:
            raise FieldError(
                f"{path} holds no PEM certificate",
                "give a file with -----BEGIN CERTIFICATE----- blocks",
            )
    return CaCert(name=f"{index:02d}-envkit.crt", pem="\n".join(blocks) + "\n")


def plan_ca_certs(loaded: LoadedSpec) -> tuple[CaCert, ...]:
    return tuple(_read(loaded, i, raw) for i, raw in enumerate(loaded.spec.mirrors.ca_certificates))
