"""cosign, the program envkit signs the team's image with and checks it by: key-based and
offline (no transparency log, no Fulcio, no TUF root fetched), so it works on a lab's own
registry behind an air gap. Signatures and attestations live beside the image in its registry
(`sha256-<digest>.sig` / `.att` tags where the registry has no referrers API).

The private key's password reaches cosign only through its environment (COSIGN_PASSWORD, or
asked once at a terminal); no key, password or key text is ever in an argument, a log line or
an error message."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from envkit.errors import EnvkitError

TIMEOUT_S = 300
# Key-based signing records nothing in Rekor; verifying then must not ask Rekor or TUF either
# (--private-infrastructure skips both, where plain --offline still fetches TUF's root).
SIGN_FLAGS = ("--tlog-upload=false", "--allow-http-registry", "-y")
VERIFY_FLAGS = ("--private-infrastructure=true", "--allow-http-registry")
# cosign verify's exit codes (cmd/cosign/errors): no signature at all, or none by this key.
NO_SIGNATURE, WRONG_KEY = 10, 12
SBOM_TYPE = "cyclonedx"
PROVENANCE_TYPE = "https://slsa.dev/provenance/v1"  # as written: cosign's alias rewrites it


class SignatureError(EnvkitError):
    """An image that is not signed by the team's key."""


def cosign() -> str:
    found = shutil.which("cosign")
    if found is None:
        raise EnvkitError(
            "cosign is not installed: envkit signs and checks images with it",
            "install Debian 13's cosign package (`make cosign` in envkit's checkout does), or "
            "cosign 2.x from its releases",
        )
    return found


def _run(args: list[str], env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            [cosign(), *args],
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            env={**os.environ, **(env or {})},
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        raise EnvkitError(
            f"cosign {args[0]} took over {TIMEOUT_S}s", "check that the registry answers"
        ) from None


def _said(done: subprocess.CompletedProcess[str], secret: str | None = None) -> str:
    """cosign's own last error line, the password scrubbed should it ever echo it."""
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("Error")] or lines[-1:]
    said = " ".join(errors[-1].split())[:300] if errors else f"exit {done.returncode}"
    return said.replace(secret, "***") if secret else said


def key_password(key: Path) -> str:
    """The private key's password: COSIGN_PASSWORD, else asked at a terminal (never echoed)."""
    if "COSIGN_PASSWORD" in os.environ:
        return os.environ["COSIGN_PASSWORD"]
    if sys.stdin.isatty():
        import getpass

        return getpass.getpass(f"password of {key}: ")
    raise EnvkitError(
        f"{key} is encrypted and there is no terminal to ask its password at",
        "set COSIGN_PASSWORD in the environment (an empty value for a key made without one)",
    )


def _key(path: Path, what: str) -> str:
    if not path.is_file():
        raise EnvkitError(
            f"{what} {path} does not exist",
            "make a key pair with `cosign generate-key-pair` (cosign.key stays with the lead; "
            "cosign.pub is committed beside envkit.yaml)",
        )
    return str(path)


def open_key(key: Path) -> str:
    """KEY's password, once cosign has opened KEY with it: a wrong key or password stops a
    command before it does any work."""
    password = key_password(key)
    check_key(key, password)
    return password


def _with_key(args: list[str], key: Path, password: str, failed: str, fix: str) -> None:
    """cosign ARGS[0] with the signing KEY opened by PASSWORD, then ARGS[1:]; FAILED (what
    could not be done) and cosign's own words where it fails."""
    key_args = ["--key", _key(key, "signing key")]
    done = _run([args[0], *key_args, *args[1:]], {"COSIGN_PASSWORD": password})
    if done.returncode != 0:
        raise EnvkitError(f"cosign could not {failed}: {_said(done, password)}", fix)


def check_key(key: Path, password: str) -> None:
    """KEY opens with PASSWORD: cosign derives its public half (nothing leaves the machine)."""
    _with_key(
        ["public-key"],
        key,
        password,
        f"open the signing key {key}",
        "check COSIGN_PASSWORD (the password given to `cosign generate-key-pair`), and that "
        "the file is cosign's private key (cosign.key, not cosign.pub)",
    )


def sign(reference: str, key: Path, password: str) -> None:
    """Sign REFERENCE (REPO@sha256:…) with KEY."""
    _with_key(
        ["sign", *SIGN_FLAGS, reference],
        key,
        password,
        f"sign {reference}",
        "check the key's password (COSIGN_PASSWORD) and that this login may push to the registry",
    )


def attest(reference: str, key: Path, password: str, predicate: dict[str, Any], kind: str) -> None:
    """Attach PREDICATE to REFERENCE as a signed in-toto statement of type KIND (cosign writes
    the statement with the image's digest as its subject); one per kind, replaced on re-push."""
    with tempfile.TemporaryDirectory(prefix="envkit-attest-") as folder:
        path = Path(folder) / "predicate.json"
        path.write_text(json.dumps(predicate, sort_keys=True), encoding="utf-8")
        argv = ["attest", *SIGN_FLAGS, "--replace", "--type", kind, "--predicate", str(path)]
        _with_key(
            [*argv, reference],
            key,
            password,
            f"attach the {kind} statement to {reference}",
            "check the key's password (COSIGN_PASSWORD) and the registry's push rights",
        )


def verify(reference: str, public_key: Path) -> None:
    """Refuse REFERENCE (REPO@sha256:…) unless the key's owner signed that very digest."""
    done = _run(
        ["verify", "--key", _key(public_key, "signing.verify: the key"), *VERIFY_FLAGS, reference]
    )
    if done.returncode == 0:
        return
    if done.returncode == NO_SIGNATURE:
        problem = "carries no signature"
    elif done.returncode == WRONG_KEY:
        problem = f"is signed, but not by the key in {public_key}"
    else:
        problem = f"could not be checked: {_said(done)}"
    raise SignatureError(
        f"signing.verify: {reference} {problem}",
        "only an image the team's lead pushed with `envkit push --sign` is used; ask them to "
        "push it signed, or build it here with `envkit build --build`",
    )


def sign_blob(path: Path, key: Path, password: str) -> Path:
    """PATH signed with KEY, offline: the signature beside it, as PATH.sig."""
    signature = path.with_name(path.name + ".sig")
    _with_key(
        ["sign-blob", "--tlog-upload=false", "-y", "--output-signature", str(signature), str(path)],
        key,
        password,
        f"sign {path.name}",
        "check the key's password (COSIGN_PASSWORD)",
    )
    return signature


def verify_blob(path: Path, public_key: Path) -> None:
    """Refuse PATH unless PATH.sig is the key's signature of exactly these bytes (offline)."""
    signature = path.with_name(path.name + ".sig")
    if not signature.is_file():
        raise SignatureError(
            f"signing.verify: {path} carries no signature ({signature.name} is missing)",
            "take only a bundle the lead made with `envkit bundle --sign KEY`",
        )
    key = _key(public_key, "signing.verify: the key")
    argv = ["verify-blob", "--key", key, "--signature", str(signature)]
    done = _run([*argv, "--private-infrastructure=true", str(path)])
    if done.returncode != 0:
        raise SignatureError(
            f"signing.verify: {path} is not signed by the key in {public_key}: {_said(done)}",
            "nothing was loaded or run; take the bundle again from the team's lead",
        )
