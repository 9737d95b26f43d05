"""Strict field types for envkit.yaml.

Every value that can reach a Dockerfile, a shell line or a YAML file envkit writes is checked here
against a pattern that admits no quote, newline, backslash or shell metacharacter it does not need.
Validators raise `FieldError` (envkit.errors) so the loader can show the problem and its fix
separately.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

from packaging.requirements import InvalidRequirement, Requirement
from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema

from envkit.addresses import canonical_address, check_mapping, distinct_addresses
from envkit.catalog.mirrors import preset_names
from envkit.checks.core.contract import DEFAULT_THRESHOLDS
from envkit.checks.core.contract import size_bytes as contract_size_bytes
from envkit.errors import FieldError
from envkit.names import IMAGE_REF, REGISTRY_REPO

# Characters no rendered value may carry: they end or continue Dockerfile instructions (newline,
# backslash) or break out of quoting.
_CONTROL = re.compile(r"[\x00-\x1f\x7f\\]")


class Strict(BaseModel):
    """The base of every envkit.yaml section: frozen, and an unknown key is an error (a typo in
    a field name must not pass silently)."""

    model_config = ConfigDict(frozen=True, extra="forbid")


def refusing(bad: Callable[[Any], object], problem: str, fix: str) -> AfterValidator:
    """A validator that lets a value through unless BAD(value) holds."""

    def check(value: Any) -> Any:
        if bad(value):
            raise FieldError(problem, fix)
        return value

    return AfterValidator(check)


def by_shape(value: Any) -> str:
    """The Discriminator of a union of a plain value and a mapping: a mistake is then reported
    against the member the value is written as, not once per member."""
    return "union:mapping" if isinstance(value, dict) else "union:value"


def matching(pattern: str, what: str, fix: str) -> AfterValidator:
    # compiled at the first value checked (re's own cache), not at import: a config sets few
    return refusing(
        lambda v: _CONTROL.search(v) or not re.fullmatch(pattern, v), f"not a valid {what}", fix
    )


ProjectName = Annotated[
    str,
    matching(
        r"[a-z0-9][a-z0-9_-]{0,62}",
        "project name",
        "use lowercase letters, digits, '-' and '_' (it names the image and containers), "
        "e.g. 'vision-lab'",
    ),
]
PixiEnvironment = Annotated[
    str, matching(r"[a-z0-9-]{1,63}", "pixi environment", "as pixi.toml names it, e.g. 'cuda'")
]
ImageRef = Annotated[
    str,
    matching(
        IMAGE_REF,
        "image reference",
        "write an image as NAME[:TAG], e.g. 'nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04'",
    ),
]
RegistryRepo = Annotated[
    str,
    matching(
        REGISTRY_REPO.pattern,
        "registry",
        "write the registry as HOST[:PORT][/PATH] (a host with a dot or a port), e.g. "
        "'registry.lab.example:5000/nlp'; the image goes to HOST[:PORT]/PATH/NAME",
    ),
]


def _quoted_version(value: object) -> object:
    # YAML reads `python: 3.10` as the float 3.1; refusing numbers avoids that silent trap.
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        raise FieldError(
            "versions must be quoted strings (YAML reads unquoted 3.10 as the number 3.1)",
            "quote it exactly as you mean it, e.g. python: '3.10', torch: '2.4.1', cuda: '12.4'",
        )
    return value


_QUOTED = BeforeValidator(_quoted_version)

MinorVersion = Annotated[
    str,
    _QUOTED,
    matching(
        r"[0-9]+\.[0-9]+|cpu",
        "CUDA version",
        "write MAJOR.MINOR as a quoted string, e.g. '12.4', or 'cpu' for a CPU-only torch",
    ),
]
TorchVersion = Annotated[
    str,
    _QUOTED,
    matching(
        r"[0-9]+\.[0-9]+(?:\.[0-9]+)?|none",
        "torch version",
        "write a release as a quoted string, e.g. '2.4.1' (see `envkit compat`), or 'none' "
        "for a project without torch (TensorFlow, JAX)",
    ),
]
PythonVersion = Annotated[
    str,
    _QUOTED,
    matching(r"3\.[0-9]{1,2}", "python version", "write 3.MINOR as a quoted string, e.g. '3.11'"),
]
AptPackage = Annotated[
    str,
    matching(
        r"[a-z0-9][a-z0-9+.-]+(?::[a-z0-9-]+)?(?:=[A-Za-z0-9.+~:-]+)?",
        "Debian package name",
        "use a package name, optionally pinned: 'git' or 'git=1:2.39.2-1.1'",
    ),
]
CondaSpec = Annotated[
    str,
    matching(
        # spaces around an operator as conda reads them too: `python >= 3.8`
        r"(?:[A-Za-z0-9_.-]+::)?[A-Za-z0-9_][A-Za-z0-9_.-]*"
        r"(?:(?: ?(?:==|>=|<=|!=|=|<|>|~=) ?| )[A-Za-z0-9_.*+!]+"
        r"(?: ?[,|] ?(?:==|>=|<=|!=|<|>|~=)? ?[A-Za-z0-9_.*+!]+)*"
        r"(?:[= ][A-Za-z0-9_.*+!]+)?)?",  # a build string, as `conda env export` writes them
        "conda package spec",
        "use NAME, NAME=VERSION, NAME=VERSION=BUILD or CHANNEL::NAME, e.g. 'numpy=1.26' or "
        "'conda-forge::jupyterlab'",
    ),
]
Channel = Annotated[
    str,
    matching(
        r"[A-Za-z0-9_][A-Za-z0-9_.-]*(?:/label/[A-Za-z0-9_.-]+)?"
        r"|https?://[A-Za-z0-9.-]+(?::[0-9]+)?(?:/[A-Za-z0-9._~%+-]+)*/?",
        "conda channel",
        "name a channel ('conda-forge', 'nvidia', 'nodefaults') or give its https URL",
    ),
]
HttpUrl = Annotated[
    str,
    matching(
        r"https?://[A-Za-z0-9.-]+(?::[0-9]{1,5})?(?:/[A-Za-z0-9._~%+-]+)*/?",
        "http(s) URL",
        "give a plain URL without spaces, quotes or query strings, "
        "e.g. 'https://pypi.tuna.tsinghua.edu.cn/simple'",
    ),
]
HostName = Annotated[
    str,
    matching(
        r"[A-Za-z0-9.-]+(?::[0-9]{1,5})?", "host name", "give a bare host, e.g. 'pypi.example.org'"
    ),
]
# The `notebook:` section's: pinned releases, a kernel's name, a log folder under the login
# home (no `..` segment: it must stay inside).
PipVersion = Annotated[
    str,
    matching(
        r"[0-9]+(?:\.[0-9]+){0,3}(?:(?:a|b|rc)[0-9]+)?",
        "release number",
        "pin an exact release, e.g. '4.3.4'",
    ),
]
KernelName = Annotated[
    str,
    matching(
        r"[a-z0-9][a-z0-9_.-]{0,63}",
        "kernel name",
        "use lowercase letters, digits, '.', '-' and '_' (Jupyter's kernelspec names), e.g. 'lab'",
    ),
]
LogDir = Annotated[
    str,
    matching(
        r"(?!\.\.?(?:/|$))[A-Za-z0-9_.+-]+(?:/(?!\.\.?(?:/|$))[A-Za-z0-9_.+-]+)*",
        "log folder",
        "give a folder relative to the login home, e.g. runs or experiments/tb",
    ),
]
# Accounts a Debian or Ubuntu image already has (base-passwd, openssh, systemd, the ubuntu
# image's own user; system_accounts.txt, one a line): a login of that name would take over a
# system account, and `root` crash-loops the container (it cannot be a keys-only login user).
SYSTEM_ACCOUNTS = frozenset(Path(__file__).with_name("system_accounts.txt").read_text().split())


def _not_a_system_account(value: str) -> str:
    if value in SYSTEM_ACCOUNTS:
        raise FieldError(
            f"{value} is a system account of the image",
            "pick a personal login name, e.g. dev or the member's own name",
        )
    return value


UserName = Annotated[
    str,
    matching(
        r"[a-z_][a-z0-9_-]{0,31}",
        "user name",
        "use a POSIX login name: lowercase letters, digits, '-' and '_', starting with a letter",
    ),
    AfterValidator(_not_a_system_account),
]
EnvKey = Annotated[
    str,
    matching(r"[A-Za-z_][A-Za-z0-9_]*", "environment variable name", "use letters, digits and '_'"),
]
Volume = Annotated[
    str,
    matching(
        r"[A-Za-z0-9_.~/${}-]+:[/$][A-Za-z0-9_./${}-]*(?::(?:ro|rw|z|Z|cached|delegated|consistent))?",
        "volume",
        "write HOST_PATH:CONTAINER_PATH[:ro], e.g. '$HOME:$HOME' or './data:/data:ro'",
    ),
]


def size_bytes(text: str) -> int:
    """'16gb', '512m', '2g', '1048576' in bytes: the checks' one size grammar, as a FieldError."""
    try:
        return contract_size_bytes(text)
    except ValueError:
        raise FieldError(
            "not a valid size", "write a size such as '16gb', '512m' or '2g'"
        ) from None


def _between(low: int, high: int, problem: str, fix: str) -> AfterValidator:
    return refusing(lambda v: not low <= size_bytes(v) <= high, problem, fix)


SIZE = r"[0-9]{1,16}(?:[bkmgBKMG]|[kmgKMG][bB])?"
MemorySize = Annotated[
    str,
    matching(SIZE, "size", "write a size such as '64g', '512m' or '32gb'"),
    _between(
        6 * 1024**2,
        64 * 1024**4,
        "a memory limit must lie between 6 MiB (Docker's least) and 64 TiB",
        "write a size such as '64g' or '512m'",
    ),
]
ShmSize = Annotated[
    str,
    matching(SIZE, "size", "write a size such as '16gb', '512m' or '2g'"),
    _between(
        1024**2,
        4 * 1024**4,
        "a shared-memory size must lie between 1 MiB and 4 TiB",
        "write a size such as '16gb' (DataLoader workers want gigabytes, not bytes)",
    ),
]
LoginHome = Annotated[
    str,
    matching(
        r"(?!.*(?:^|/)\.\.?(?:/|$))/[A-Za-z0-9_./-]*|\$HOME|\$\{HOME\}",
        "login directory",
        "write an absolute path such as /workspace, or $HOME (the invoking user's home path)",
    ),
]


def _one_or_many(value: Any) -> Any:
    # `bind: 0.0.0.0` (the wave-1 form) stays valid: one address is a list of one. Checked here
    # so that a mistake is reported at ssh.bind, where the user wrote it, not at ssh.bind[0].
    return (canonical_address(value),) if isinstance(value, str) else value


BindAddress = Annotated[str, AfterValidator(canonical_address)]
BindAddresses = Annotated[
    tuple[BindAddress, ...],
    BeforeValidator(_one_or_many),
    AfterValidator(distinct_addresses),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "string"},
                {"type": "array", "items": {"type": "string"}, "minItems": 1},
            ]
        }
    ),
]
PortMapping = Annotated[str, AfterValidator(check_mapping)]
CheckId = Annotated[
    str,
    matching(
        r"[a-z0-9_]+(?:\.[a-z0-9_]+)*",
        "check id",
        "use a dotted check id such as 'bench.matmul_bf16' (see docs/checks.md)",
    ),
]
# The checks that judge a figure against a fraction of a published rate: those the suite has a
# default threshold for.
THRESHOLD_CHECKS = tuple(DEFAULT_THRESHOLDS)
ThresholdId = Annotated[
    CheckId,
    refusing(
        lambda v: v not in THRESHOLD_CHECKS,
        "no check of that id takes a threshold",
        f"use one of {', '.join(THRESHOLD_CHECKS)} (see docs/checks.md)",
    ),
]
Count = Annotated[int, Field(ge=0, strict=True)]  # strict: `true` is not 1
XidCode = Annotated[int, Field(ge=1, le=999, strict=True)]  # NVIDIA's Xid numbers
PeakFraction = Annotated[float, Field(gt=0, le=1, allow_inf_nan=False)]
Sha256 = Annotated[
    str, matching(r"[0-9a-f]{64}", "sha256", "write the 64 lowercase hex digits `sha256sum` prints")
]
Component = Annotated[
    str,
    matching(r"[a-z-]+", "apt component", "use e.g. main, contrib, non-free, non-free-firmware"),
]
Port = Annotated[int, Field(ge=1, le=65535, strict=True)]  # strict: `true` is not port 1
NOBODY_ID = 65534  # nobody/nogroup: files it owns are nobody's
AccountId = Annotated[
    int,
    Field(ge=1, le=2**31, strict=True),
    refusing(
        lambda v: v == NOBODY_ID,
        "65534 is nobody's id (files it owns belong to no one)",
        "use your own id (`id -u`, `id -g`), or leave it out to default to it",
    ),
]


def _check_pip_requirement(value: str) -> str:
    fix = "write a PEP 508 requirement such as 'numpy>=1.26' or 'transformers==4.44.2'"
    if _CONTROL.search(value) or value.lstrip().startswith("-"):
        raise FieldError("not a pip requirement (options and control characters are refused)", fix)
    try:
        Requirement(value)
    except InvalidRequirement as exc:
        raise FieldError(f"not a valid pip requirement ({str(exc).splitlines()[0]})", fix) from None
    if "`" in value or "$" in value:
        # PEP 508 has no use for them (markers quote with " or '); they only serve a shell. Every
        # requirement is quoted where it is rendered all the same.
        raise FieldError("` and $ have no place in a requirement", fix)
    return value


PipRequirement = Annotated[str, AfterValidator(_check_pip_requirement)]


EnvValue = Annotated[
    str,
    refusing(
        re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f\ufeff\ufffe\uffff]").search,
        "control characters (newlines included) are not allowed in an environment value",
        "put the value on one line",
    ),
]


MAX_GPUS = 64  # more than any one host holds; a larger figure is a typo


def _check_gpus(value: object) -> object:
    fix = "use all, none, a count such as 2, or a list of device ids such as [0, 1]"
    if value in ("all", "none"):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        if not 1 <= value <= MAX_GPUS:
            raise FieldError(
                f"a GPU count must lie between 1 and {MAX_GPUS}", "use none for no GPUs, or " + fix
            )
        return value
    if isinstance(value, list) and 0 < len(value) <= MAX_GPUS:
        ids: list[str] = []
        for item in value:
            text = str(item)
            if isinstance(item, bool) or not re.fullmatch(r"[0-9]{1,3}|GPU-[0-9a-fA-F-]{36}", text):
                raise FieldError(f"{text[:40]!r} is not a GPU index or GPU-UUID", fix)
            if text in ids:
                raise FieldError(f"GPU {text} is listed twice", "list each device once")
            ids.append(text)
        return tuple(ids)
    raise FieldError("not a GPU request", fix)


GpuRequest = Annotated[str | int | tuple[str, ...], BeforeValidator(_check_gpus)]


def _known_preset(value: str) -> str:
    names = preset_names()
    if value not in names:
        raise FieldError(
            "not a mirror preset",
            f"use {', '.join(map(repr, names[:-1]))} or {names[-1]!r} "
            "(or set mirrors.apt/pip/conda to your own URLs)",
        )
    return value


# The names come from the catalogue (catalog/data/mirrors.yaml), the one list of presets: a
# preset added there is accepted here, listed by `envkit compat --mirrors` and in the schema.
PresetName = Annotated[
    str,
    AfterValidator(_known_preset),
    WithJsonSchema({"type": "string", "enum": list(preset_names())}),
]


def check_project_path(value: str) -> str:
    fix = "write a path inside the project, relative to envkit.yaml, e.g. requirements.txt"
    if value.startswith("/") or value.startswith("~"):
        raise FieldError("an absolute path: the project's files must be inside it", fix)
    if not re.fullmatch(r"[A-Za-z0-9_.+-]+(?:/[A-Za-z0-9_.+-]+)*", value):
        raise FieldError("not a plain relative path (letters, digits, . _ + - and /)", fix)
    if any(part in (".", "..") for part in value.split("/")):
        raise FieldError("a path that leaves the project (or names a folder by . or ..)", fix)
    return value


ProjectPath = Annotated[str, AfterValidator(check_project_path)]


AnyPath = Annotated[  # a path anywhere on the host
    str,
    refusing(
        lambda v: any(ord(c) < 32 for c in v),
        "a path with a NUL byte or a control character",
        "write a plain path",
    ),
]


def _check_build_command(value: str) -> str:
    if not value.strip():
        raise FieldError("an empty command", "write the command to run, e.g. 'make install'")
    if "\0" in value or len(value) > 4000:
        raise FieldError("a NUL byte or over 4000 characters", "put a long script in a file")
    return value


BuildCommand = Annotated[str, AfterValidator(_check_build_command)]
