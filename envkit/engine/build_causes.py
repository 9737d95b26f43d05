"""Why a build step failed, read from its log by cause, most specific first: TLS verification
(a proxy that inspects TLS: its CA goes in mirrors.ca_certificates, the host named), a name that
does not resolve (DNS), an index that does not answer, a version the index does not have (the
versions it has), two requirements that conflict (both named), a package apt does not know, a
lock's pin or sum the mirror no longer matches. pip's, uv's, apt's and conda's words alike."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

Rule = Callable[[str], "str | None"]
HOST = r"([A-Za-z0-9][A-Za-z0-9.-]*\.[A-Za-z]{2,}|localhost|\d+\.\d+\.\d+\.\d+)"


def _first_host(text: str, *patterns: str) -> str | None:
    for pattern in patterns:
        if found := re.search(pattern, text):
            return found.group(1)
    return None


def _tls(text: str) -> str | None:
    if not re.search(
        r"CERTIFICATE_VERIFY_FAILED|certificate verify failed|invalid peer certificate|"
        r"UnknownIssuer|self[- ]signed certificate|unable to get local issuer certificate|"
        r"server certificate verification failed",
        text,
    ):
        return None
    host = _first_host(
        text,
        rf"host='{HOST}'",
        rf"unable to access 'https://{HOST}",
        rf"url \(?https://{HOST}",
        rf"https://{HOST}[^\s]*[^\n]*(?:certif|UnknownIssuer)",
        rf"https://{HOST}",
    )
    where = f" on the way to {host}" if host else ""
    return (
        f"TLS verification failed{where}: a proxy that inspects TLS signs with its own CA. Add "
        "that CA (PEM) to envkit.yaml: mirrors.ca_certificates: [corp-ca.pem]; envkit trusts it "
        "in the build and the image"
    )


def _dns(text: str) -> str | None:
    host = _first_host(
        text,
        rf"Could not resolve host:? '?{HOST}",
        rf"Temporary failure resolving '{HOST}'",
        rf"Failed to resolve '{HOST}'",
        rf"{HOST}[^\n]*(?:Name or service not known|nodename nor servname|"
        r"No address associated with hostname|dns error)",
        rf"(?:Name or service not known|dns error)[^\n]*{HOST}",
        rf"https?://{HOST}[^\n]*\n[^\n]*dns error",
    )
    if host is None and not re.search(r"dns error|Name or service not known", text):
        return None
    name = host or "the mirror's host"
    return (
        f"the build cannot resolve {name} (DNS): the engine's DNS does not know it. Try another "
        "mirrors.preset, give the engine a DNS server, or runtime.build_network: host"
    )


def _unreachable(text: str) -> str | None:
    found = re.search(
        r"(Connection timed out|Could not connect to|Max retries exceeded|Connection refused|"
        r"error sending request for url|Failed to fetch|operation timed out)[^\n]*",
        text,
    )
    if not found:
        return None
    host = _first_host(found.group(0), rf"https?://{HOST}", rf"host='{HOST}'", rf" to {HOST}")
    return (
        f"{host or 'a mirror'} did not answer: try another mirrors.preset (e.g. tuna, ustc, "
        "official), or runtime.build_network: host behind a proxy"
    )


def _missing_version(text: str) -> str | None:
    found = re.search(
        r"Because only `?([A-Za-z0-9_.-]+)(?:<=|==)([^\s`]+)`? (?:is|are) available and you "
        r"require `?([^`\s,]+)`?",
        text,
    )
    if found:  # uv: the newest the index has is older than the requirement asks
        name, newest, wanted = found.groups()
        return (
            f"the index has no {wanted}: its newest {name} is {newest}. Change the version (or "
            "the mirror, if it lags)"
        )
    found = re.search(
        r"Could not find a version that satisfies the requirement (\S+) \(from versions: ([^)]*)\)",
        text,
    )
    if found:
        have = found.group(2).strip() or "none"
        return (
            f"the index has no {found.group(1)}; it has: {_last(have)}. Change the version (or "
            "the mirror, if it lags)"
        )
    found = re.search(
        r"Because (?:there (?:is|are) no versions? of|only the following versions of) "
        r"`?([^`\s]+?)`? "
        r"(?:(?:are|is) available:?\s*((?:\s*[^\n]+\n?){1,8}?)|and)",
        text,
    )
    if found and "depends on" not in found.group(0):
        have = " ".join(re.findall(r"[0-9][0-9A-Za-z.+!]*", found.group(2) or ""))
        listed = f"; it has: {_last(have)}" if have else ""
        return f"the index has no {found.group(1)}{listed}. Change the version (or the mirror)"
    found = re.search(
        r"No matching distribution found for (\S+)|Because `?([^`\s]+?)`? "
        r"(?:was not found|could not be found)",
        text,
    )
    if found:
        name = found.group(1) or found.group(2)
        return f"the index has no {name}: check the name and version, or the mirror"
    return None


def _conda_missing(text: str) -> str | None:
    """conda's, libmamba's and rattler's (envkit-conda's) words for a package the channels do
    not have."""
    found = re.search(
        r"PackagesNotFoundError[^\n]*(?:\n[^\n]*){0,4}?\n\s+- ([^\s]+)|"
        r"nothing provides requested ([^\s]+(?: [^\s]+)?)|"
        r"[-─] ([^\s]+) does not exist \(perhaps a typo or a missing channel\)|"
        r"No candidates were found for ([^\s]+(?: [^\s.]+)?)",
        text,
    )
    if not found:
        return None
    name = next(g for g in found.groups() if g).rstrip(".")
    return (
        f"the conda channels have no {name}: check its name and version (conda search), and "
        "the channels (conda.channels, the file's channels:)"
    )


def _last(versions: str, count: int = 8) -> str:
    items = [v.strip() for v in re.split(r"[,\s]+", versions) if v.strip()]
    shown = ", ".join(items[-count:])
    return ("…, " + shown) if len(items) > count else shown


def _conflict(text: str) -> str | None:
    found = re.search(r"(Because [^\n]*(?:\n\s+[^\n]+)*?unsatisfiable\.?)", text)
    if found:
        return f"two requirements conflict: {' '.join(found.group(1).split())[:400]}"
    found = re.search(r"The conflict is caused by:\s*\n((?:\s+[^\n]+\n?){1,6})", text)
    if found:
        lines = "; ".join(line.strip() for line in found.group(1).splitlines() if line.strip())
        return f"two requirements conflict: {lines[:400]}"
    return None


def _simple(pattern: str, hint: str) -> Rule:
    compiled = re.compile(pattern)

    def rule(text: str) -> str | None:
        found = compiled.search(text)
        return hint.format(*[g for g in found.groups() if g is not None]) if found else None

    return rule


RULES: list[Rule] = [
    _simple(
        r"Version '([^']+)' for '([^']+)' was not found",
        "the lock pins {1} {0}, which the apt mirror no longer serves: rebuild without --locked "
        "and `envkit lock` again, or point mirrors.apt at a snapshot archive (docs/lock.md)",
    ),
    _simple(
        r"(THESE PACKAGES DO NOT MATCH THE HASHES|Hash mismatch for)",
        "a file on the pip index no longer matches the sum in envkit.lock: find out why before "
        "trusting it; `envkit lock` again only if the new file is known good",
    ),
    _tls,
    _dns,
    _missing_version,
    _conda_missing,
    _conflict,
    _unreachable,
    _simple(
        r"Unable to locate package (\S+)",
        "apt has no package named {0}: check the name in packages.apt (`apt-cache search`)",
    ),
    _simple(
        r"NO_PUBKEY ([0-9A-F]+)",
        "apt lacks key {0}: the CUDA repo key rotated; cuda-repo.sh replaces stale lists",
    ),
]


def cause(log: Iterable[str]) -> str | None:
    """The failure's cause and its fix, or None where no rule knows the log."""
    text = "\n".join(log)
    for rule in RULES:
        if said := rule(text):
            return said
    return None
