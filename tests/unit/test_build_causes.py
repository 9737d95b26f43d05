"""A failed build's cause, read from the log as pip, uv, apt and curl print it (issue 34): each
excerpt below is the tool's own wording; the cause names the fix (a TLS-inspecting proxy's CA
in mirrors.ca_certificates with the host, DNS, an index that does not answer, the versions an
index has, two conflicting requirements), most specific first: a TLS failure inside a "not
found" is a TLS failure."""

from __future__ import annotations

import pytest

from envkit.engine.build_causes import cause

CASES = [
    (
        "uv, TLS inside a resolution failure",
        "error: Failed to fetch: `https://pypi.org/simple/uv/`\n"
        "  Caused by: Request failed after 3 retries\n"
        "  Caused by: error sending request for url (https://pypi.org/simple/uv/)\n"
        "  Caused by: client error (Connect)\n"
        "  Caused by: invalid peer certificate: UnknownIssuer\n"
        "  × No solution found when resolving dependencies:\n"
        "  ╰─▶ Because uv==0.13.9 was not found in the package registry",
        ["TLS verification failed on the way to pypi.org", "mirrors.ca_certificates"],
    ),
    (
        "pip, TLS",
        "WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) "
        "after connection broken by 'SSLError(SSLCertVerificationError(1, '[SSL: "
        "CERTIFICATE_VERIFY_FAILED] certificate verify failed: unable to get local issuer "
        "certificate (_ssl.c:1006)'))': /simple/numpy/\n"
        "Could not fetch URL https://mirrors.tuna.tsinghua.edu.cn/pypi/web/simple/numpy/: "
        "There was a problem confirming the ssl certificate",
        ["TLS verification failed on the way to mirrors.tuna.tsinghua.edu.cn"],
    ),
    (
        "apt, DNS",
        "W: Failed to fetch http://deb.debian.org/debian/dists/bookworm/InRelease  Temporary "
        "failure resolving 'deb.debian.org'",
        ["cannot resolve deb.debian.org (DNS)"],
    ),
    (
        "uv, DNS",
        "error: Request failed after 3 retries\n  Caused by: error sending request for url "
        "(https://mirrors.ustc.edu.cn/pypi/simple/six/)\n  Caused by: dns error: failed to "
        "lookup address information: Name or service not known",
        ["cannot resolve mirrors.ustc.edu.cn (DNS)"],
    ),
    (
        "pip, missing version",
        "ERROR: Could not find a version that satisfies the requirement numpy==9.9 (from "
        "versions: 1.24.0, 1.24.1, 1.26.4, 2.0.0, 2.1.3)\nERROR: No matching distribution found "
        "for numpy==9.9",
        ["the index has no numpy==9.9; it has: 1.24.0, 1.24.1, 1.26.4, 2.0.0, 2.1.3"],
    ),
    (
        "uv, conflict",
        "  × No solution found when resolving dependencies:\n"
        "  ╰─▶ Because torchvision==0.20.1 depends on torch==2.5.1 and you require "
        "torchvision==0.20.1, we can conclude that you require torch==2.5.1.\n"
        "      And because you require torch==1.13.0a0+gitunknown, we can conclude that your "
        "requirements are unsatisfiable.",
        ["two requirements conflict: Because torchvision==0.20.1 depends on torch==2.5.1",
         "torch==1.13.0a0+gitunknown"],
    ),
    (
        "pip, conflict",
        "ERROR: Cannot install numpy>=2 because these package versions have conflicting "
        "dependencies.\n\nThe conflict is caused by:\n    The user requested numpy>=2\n    "
        "The user requested (constraint) numpy<2,>=1\n\nTo fix this you could try to:",
        ["two requirements conflict: The user requested numpy>=2; The user requested (constraint) numpy<2,>=1"],
    ),
    (
        "a mirror that does not answer",
        "WARNING: Retrying ... Max retries exceeded with url: /simple/six/ (Caused by "
        "ConnectTimeoutError(host='mirrors.aliyun.com', port=443): Connection timed out",
        ["did not answer"],
    ),
    ("apt, unknown package", "E: Unable to locate package no-such-pkg", ["apt has no package named no-such-pkg"]),
    (
        "uv, a version newer than the index has",
        "  × No solution found when resolving dependencies:\n"
        "  ╰─▶ Because only numpy<=2.1.3 is available and you require numpy>=9, we can conclude "
        "that your requirements are unsatisfiable.",
        ["the index has no numpy>=9: its newest numpy is 2.1.3"],
    ),
    (
        "uv, no version at all",
        "  ╰─▶ Because there are no versions of no-such-thing and you require no-such-thing, we "
        "can conclude that your requirements are unsatisfiable.",
        ["the index has no no-such-thing"],
    ),
    (
        "conda, not in the channels",
        "PackagesNotFoundError: The following packages are not available from current channels:\n"
        "\n  - nosuchpkg=1.0\n\nCurrent channels:\n\n  - https://conda.anaconda.org/conda-forge",
        ["the conda channels have no nosuchpkg=1.0"],
    ),
    (
        "libmamba, not in the channels",
        "error    libmamba Could not solve for environment specs\n    The following package could "
        "not be installed\n    └─ nosuchpkg does not exist (perhaps a typo or a missing channel).",
        ["the conda channels have no nosuchpkg"],
    ),
    (
        "envkit-conda (rattler), not in the channels",
        "envkit-conda: cannot solve python=3.11 nosuchpkg from http://127.0.0.1:8/cloud/conda-forge: "
        "Cannot solve the request because of: No candidates were found for nosuchpkg.",
        ["the conda channels have no nosuchpkg"],
    ),
    (
        "git, TLS",
        "fatal: unable to access 'https://git.example.com/team/lib.git/': server certificate "
        "verification failed. CAfile: none CRLfile: none",
        ["TLS verification failed on the way to git.example.com"],
    ),
]  # fmt: skip


@pytest.mark.parametrize(("what", "log", "phrases"), CASES, ids=[c[0] for c in CASES])
def test_the_cause_is_named_with_its_fix(what: str, log: str, phrases: list[str]) -> None:
    said = cause(log.splitlines())
    assert said is not None, what
    for phrase in phrases:
        assert phrase in said, (what, said)


def test_a_log_without_a_known_cause_has_none() -> None:
    assert cause(["Step 4/9 : RUN make", "make: *** [all] Error 2"]) is None
