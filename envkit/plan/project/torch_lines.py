"""A project's own torch lines, judged against the torch envkit installs: a line the resolved
torch satisfies is envkit's torch (dropped from the project's layer, installed and checked by
envkit's torch layer), a line it cannot satisfy is refused with both values and the fix.
torchvision and torchaudio go with torch: a line that admits the release built for envkit's
torch is installed beside it, from the same index; conda's pytorch, pytorch-cuda, cudatoolkit
and cpuonly are read the same way."""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass
from urllib.parse import unquote

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from envkit.catalog import compat
from envkit.catalog.compat import COMPANIONS, companions, cuda_of
from envkit.config.rules import TORCH_NAMES
from envkit.plan.project.cuda_wheels import mismatch

CONDA_CUDA = ("pytorch-cuda", "cudatoolkit", "cuda-version")
# NVIDIA's toolkit in a conda environment (nvcc, the runtime): the environment's own, kept; its
# CUDA is the one the project builds its extensions with, so init proposes it as torch's
CONDA_TOOLKIT = ("cuda", "cuda-toolkit", "cuda-nvcc", "cuda-runtime", "cuda-cudart")
# PyG's find-links page of wheels built for one torch minor and CUDA (torch-scatter and its kin)
PYG_PAGE = re.compile(r"data\.pyg\.org/whl/torch-(\d+\.\d+)\.\d+\+(cu\d+|cpu)\.html")
TORCHES = frozenset({*TORCH_NAMES, *COMPANIONS})  # what envkit's torch layer installs
# What only a CUDA torch needs, as a pip-compile lock pins it beside torch: the CUDA libraries
# torch's wheels require (their Requires-Dist) and triton. Pinned for another torch build they
# would conflict with the one envkit installs. Other nvidia-* packages (npp, nvcc, dali) are
# the project's own.
TORCH_ONLY = re.compile(
    r"nvidia-(?:cublas|cuda-cupti|cuda-nvrtc|cuda-runtime|cudnn|cufft|cufile|curand|cusolver|"
    r"cusparse|cusparselt|nccl|nvjitlink|nvtx|nvshmem)-cu1[0-9]|triton|pytorch-triton"
)


@dataclass(frozen=True)
class TorchContext:
    """The torch this build installs, as a project's lines are judged against it."""

    version: str | None  # None: the image's own torch (base.image), not known at render
    build: str | None  # "12.4", "cpu"; None where the image decides
    wheel: str | None  # "cu124", "cpu": the local label of its wheels
    none: bool = False  # torch: none (a TensorFlow or JAX project)
    python: str | None = None  # the image's Python (X.Y), where envkit chooses it
    machine: str = "x86_64"

    def companion(self, name: str) -> str | None:
        return companions(self.version).get(name) if self.version else None

    def said(self) -> str:
        if self.none:
            return "no torch (torch: none)"
        if self.version is None:
            return "the torch of the base image"
        build = "CPU" if self.build == "cpu" else f"CUDA {self.build}" if self.build else ""
        return f"torch {self.version}" + (f" ({build})" if build else "")


@dataclass
class Verdict:
    action: str  # keep | drop | refuse
    why: str = ""  # drop: said in the rewritten file; refuse: the problem
    fix: str = ""
    companion: str | None = None  # a requirement envkit's torch layer installs beside torch
    said: bool = False  # a drop render says aloud: the line asked what no setting can give


TORCH_FIX = "set the top-level `torch:` (and `cuda:`) to what the line asks, or widen the line"


def applies(requirement: Requirement, context: TorchContext) -> bool:
    """Whether the line's marker holds in the image (Linux, its machine, its Python)."""
    if requirement.marker is None:
        return True
    environment = {key: str(value) for key, value in default_environment().items()}
    linux = {"sys_platform": "linux", "platform_system": "Linux", "os_name": "posix", "extra": ""}
    environment.update(linux, platform_machine=context.machine)
    if context.python:
        environment.update(python_version=context.python, python_full_version=context.python)
    try:
        return bool(requirement.marker.evaluate(environment))
    except Exception:  # a marker packaging cannot evaluate: pip decides in the build
        return True


def _split_local(specifier: SpecifierSet) -> tuple[SpecifierSet, set[str]]:
    """The specifier with local labels (+cu124) taken off, and the labels."""
    kept, labels = [], set()
    for item in specifier:
        version = item.version
        if "+" in version:
            version, label = version.split("+", 1)
            labels.add(label.lower())
        kept.append(f"{item.operator}{version}")
    return SpecifierSet(",".join(kept)), labels


def judge_pip(requirement: Requirement, context: TorchContext) -> Verdict:
    """The verdict on one pip requirement (keep it unless it names torch or a companion)."""
    name = canonicalize_name(requirement.name)
    if name not in TORCHES or not applies(requirement, context):
        return _torch_only(requirement, name, context) or _cuda_built(requirement, context)
    line = str(requirement)
    requirement = wheel_pin(requirement) or requirement  # torch-1.8.0+cu111-….whl: ==1.8.0+cu111
    if (refused := _refused_outright(requirement, name, context)) is not None:
        return refused
    if context.version is None:
        if name in TORCH_NAMES:
            return Verdict("drop", f"torch comes with the base image; {line} not installed over it")
        return Verdict("keep")
    specifier, labels = _split_local(requirement.specifier)
    asked = ", ".join(sorted(labels))
    other_build = bool(labels and context.wheel and labels != {context.wheel})
    if other_build and compat.buildable_cuda(context.version, cuda_of(asked)):
        return Verdict(
            "refuse",
            f"{line} asks for the {asked} build; envkit installs {context.said()}",
            f"set `cuda:` to the line's build ({cuda_of(asked)}), or drop +{asked} from it",
        )
    wanted = context.version if name in TORCH_NAMES else context.companion(name)
    if wanted and name not in TORCH_NAMES:
        wanted = _in_series(specifier, wanted)
    if wanted is None or not specifier.contains(wanted, prereleases=True):
        return _not_admitted(line, name, specifier, wanted, context)
    if other_build:  # no `cuda:` could give torch this build: said, and the file kept
        why = f"{line}: torch {context.version} has no {asked} build envkit can build"
        return Verdict("drop", f"{why}; installed instead: {context.said()}", said=True)
    if name in TORCH_NAMES:
        return Verdict("drop", f"{line}: envkit's torch layer installs {context.said()}")
    return Verdict(
        "drop",
        f"{line}: installed beside torch from its index ({name}=={wanted})",
        companion=f"{name}=={wanted}",
    )


def wheel_pin(requirement: Requirement) -> Requirement | None:
    """A line naming a wheel by URL as the pin its file name holds (the PyTorch index's own
    wheels: the same build envkit's torch layer installs), None for any other line."""
    file = unquote((requirement.url or "").rsplit("/", 1)[-1])
    with contextlib.suppress(InvalidWheelFilename, InvalidVersion):
        version = parse_wheel_filename(file)[1]
        if not re.fullmatch(r"(cu\d+|cpu)?", version.local or ""):
            return None  # another vendor's build (+rocm7.2.0): not one envkit's index has
        marker = f"; {requirement.marker}" if requirement.marker else ""
        return Requirement(f"{requirement.name}=={version}{marker}")
    return None


def _refused_outright(requirement: Requirement, name: str, context: TorchContext) -> Verdict | None:
    if context.none:
        return Verdict(
            "refuse",
            f"{requirement} needs torch, and envkit.yaml says torch: none",
            "set `torch:` (and `cuda:`) to install one, or drop the line",
        )
    if requirement.url:
        return Verdict(
            "refuse",
            f"{requirement} installs {name} from a URL: its CUDA build is unchecked",
            "set `torch:` and `cuda:`: envkit installs torch and its companions from the "
            "PyTorch index",
        )
    return None


def _not_admitted(
    line: str, name: str, specifier: SpecifierSet, wanted: str | None, context: TorchContext
) -> Verdict:
    """A torch or companion line that does not admit envkit's: refused with the `torch:` that
    would meet it, or, where none could (older than the table), said and left to envkit's."""
    if _no_setting_meets(name, specifier):  # no `torch:` could meet it: said, not lost
        return Verdict(
            "drop",
            f"{line}: no release envkit can build admits it (the nearest is torch "
            f"{_nearest_torch(name, specifier)}); installed instead: {context.said()}"
            + (f", {name}=={wanted}" if wanted and name not in TORCH_NAMES else ""),
            companion=f"{name}=={wanted}" if wanted and name not in TORCH_NAMES else "",
            said=True,
        )
    what = f"torch {context.version}" if name in TORCH_NAMES else f"{name} {wanted}"
    built = "" if name in TORCH_NAMES else f", the release built for torch {context.version}"
    return Verdict(
        "refuse",
        f"{line} does not admit {what}{built}; envkit installs {context.said()}",
        TORCH_FIX + _example_torch(name, specifier),
    )


def _torch_only(requirement: Requirement, name: str, context: TorchContext) -> Verdict | None:
    """A CUDA library or triton pinned beside torch: the torch layer installs torch's own."""
    cuda_torch = context.version and not context.none and context.build not in (None, "cpu")
    if not TORCH_ONLY.fullmatch(name) or not cuda_torch or not applies(requirement, context):
        return None
    return Verdict(
        "drop",
        f"{requirement}: torch's own {name} comes with envkit's torch layer, the one "
        f"{context.said()} was built with (kept by the build's constraints)",
    )


def _cuda_built(requirement: Requirement, context: TorchContext) -> Verdict:
    """Kept; a package built for another CUDA than the image's (cupy-cuda111 on 12.1) said."""
    applied = applies(requirement, context)
    why = mismatch(requirement, context.build, context.version) if applied else None
    return Verdict("keep", why or "", said=bool(why))


def _no_setting_meets(name: str, specifier: SpecifierSet) -> bool:
    """Whether the line asks only for releases older than every one envkit can build, or for
    a pre-release build (no `torch:` setting could meet it). A line asking for one newer
    than the table is refused: the table may need `envkit compat --refresh`."""
    with contextlib.suppress(InvalidVersion):  # a nightly's pin (2.1.0.dev20230403): no release
        pins = [Version(s.version) for s in specifier if s.operator in ("==", "===")]
        if pins and all(pin.is_prerelease for pin in pins):
            return True
    known = [
        release if name in TORCH_NAMES else companions(release).get(name, "")
        for release in compat.load_table().torch
    ]
    known = [v for v in known if v]
    if not known or any(specifier.contains(_in_series(specifier, v), True) for v in known):
        return False
    named = [compat.version_key(s.version) for s in specifier if s.operator != "!="]
    return bool(named) and max(named) < min(compat.version_key(v) for v in known)


def _nearest_torch(name: str, specifier: SpecifierSet) -> str:
    """The release nearest the one the line names (for a companion, the torch it was built
    for, by its series)."""
    releases = list(compat.load_table().torch)
    pinned = next((s.version for s in specifier), "") if specifier else ""
    if name in TORCH_NAMES or not pinned:
        return compat.nearest(releases, pinned or releases[0])
    by_companion = {companions(r).get(name, ""): r for r in releases}
    return by_companion[compat.nearest([v for v in by_companion if v], pinned)]


def _in_series(specifier: SpecifierSet, expected: str) -> str:
    """A companion pinned exactly to another patch of the release series built for this torch
    (torchvision 0.15.0 where 0.15.1 is the table's for torch 2.0.0): the pin, as written."""
    pinned = _pinned(specifier)
    with contextlib.suppress(InvalidVersion):
        asked = Version(pinned or "0")  # a nightly's (is_prerelease) is on no release index
        if (
            pinned
            and asked.release[:2] == Version(expected).release[:2]
            and not asked.is_prerelease
        ):
            return pinned
    return expected


def _example_torch(name: str, specifier: SpecifierSet) -> str:
    """The torch: a pinned line asks for, as the fix's example: the pin itself for torch, the
    torch release a companion's pin was built for (torchvision 0.15.1: torch 2.0.0)."""
    pinned = _pinned(specifier)
    if pinned is None:
        return ""
    if name not in TORCH_NAMES:
        try:
            series = Version(pinned).release[:2]
        except InvalidVersion:
            return ""
        built = [
            release
            for release in compat.load_table().torch
            if Version(companions(release)[name]).release[:2] == series
        ]
        if not built:
            return ""
        pinned = max(built, key=compat.version_key)
    return f' (e.g. torch: "{pinned}")'


def _pinned(specifier: SpecifierSet) -> str | None:
    exact = [s.version for s in specifier if s.operator in ("==", "===") and "*" not in s.version]
    return exact[0] if len(exact) == 1 else None


CONDA_SPEC = re.compile(r"^(?:(?P<channel>[^:\s]+)::)?(?P<name>[A-Za-z0-9_.-]+)\s*(?P<rest>.*)$")


def conda_parts(spec: str) -> tuple[str, str, str]:
    """(channel or "", name, version spec) of a conda match spec like pytorch::pytorch=2.1.*."""
    found = CONDA_SPEC.match(spec.strip())
    if not found:
        return "", spec.strip().lower(), ""
    rest = found.group("rest").strip()
    # `>= 2.0 , < 2.3` as conda reads it: spaces around operators and commas are not a build
    rest = re.sub(r"\s*([,|])\s*", r"\1", re.sub(r"([<>=!~]=?)\s+", r"\1", rest))
    if " " in rest:  # "~=2.3.1 *cuda12*", ">=1.12 py3*": the version, then a build string
        operator = re.match(r"[=<>!~]*", rest).group(0)  # type: ignore[union-attr]
        rest = operator + rest[len(operator) :].strip().split()[0]
    version = rest.split("=", 2) if rest.startswith("=") and not rest.startswith("==") else None
    if version is not None:  # "=2.1.0=py3.10_cuda12.1" -> "=2.1.0" (the build string dropped)
        rest = "=" + version[1]
    elif rest.startswith("==") and rest.count("=") > 2:
        rest = rest.rsplit("=", 1)[0]
    return found.group("channel") or "", found.group("name").lower(), rest.replace(" ", "")


def conda_specifier(rest: str) -> SpecifierSet | None:
    """conda's version syntax as PEP 440 where it can be: =2.1 is 2.1.*, == exact, the rest as
    written; None where it cannot be read (then nothing is judged by it)."""
    if not rest:
        return SpecifierSet()
    parts = []
    for item in rest.split(","):
        if item.startswith("=") and not item.startswith("=="):
            value = item[1:].rstrip(".*")
            prefix = value.count(".") < 2 or item.endswith("*")
            parts.append(f"=={value}.*" if prefix else f"=={value}")
        elif re.fullmatch(r"[0-9][0-9a-zA-Z.*]*", item):
            parts.append(f"=={item}")
        else:
            parts.append(item)
    try:
        return SpecifierSet(",".join(parts))
    except InvalidSpecifier:
        return None


def judge_conda(spec: str, context: TorchContext) -> Verdict:
    """The verdict on one conda dependency of the project's environment file."""
    _, name, rest = conda_parts(spec)
    if name not in (*TORCH_NAMES, *COMPANIONS, *CONDA_CUDA, "cpuonly", "pytorch-cpu"):
        return _judge_conda_toolkit(spec, name, rest, context)  # kept
    if context.none:
        if name in TORCHES:
            return Verdict(
                "refuse",
                f"{spec} needs torch, and envkit.yaml says torch: none",
                "set `torch:` to install one, or drop the line",
            )
        return Verdict("keep")
    if name in ("cpuonly", "pytorch-cpu"):
        if context.build not in ("cpu", None):
            return Verdict(
                "refuse",
                f"{spec} asks for a CPU torch; envkit installs {context.said()}",
                "set `cuda: cpu`, or drop the line",
            )
        return Verdict("drop", f"{spec}: envkit installs {context.said()}")
    if name in CONDA_CUDA:
        return _judge_conda_cuda(spec, rest, context)
    as_pip = f"{'torch' if name in TORCH_NAMES else name}"
    specifier = conda_specifier(rest)
    if specifier is None:
        return Verdict(
            "refuse",
            f"{spec}: a version envkit cannot compare with {context.said()}",
            "write the version as conda's =X.Y or ==X.Y.Z",
        )
    verdict = judge_pip(Requirement(f"{as_pip}{specifier}"), context)
    if verdict.action == "refuse":
        verdict.why = verdict.why.replace(f"{as_pip}{specifier}", spec, 1)
    elif verdict.action == "drop":
        verdict.why = f"{spec}: " + verdict.why.split(": ", 1)[-1]
    return verdict


def _judge_conda_toolkit(spec: str, name: str, rest: str, context: TorchContext) -> Verdict:
    """A package of the project's own, kept. NVIDIA's toolkit among them is said where its CUDA
    is not torch's: an extension its nvcc builds may not load beside torch."""
    asked = ".".join(rest.lstrip("=").split(".")[:2]).rstrip("*.")
    if name not in CONDA_TOOLKIT or not re.fullmatch(r"\d+\.\d+", asked):
        return Verdict("keep")
    if context.build in (None, "cpu", asked):
        return Verdict("keep")
    return Verdict(
        "keep",
        f"{spec}: the environment's CUDA toolkit is {asked}, torch's build {context.build}: an "
        f'extension built with its nvcc may not load beside torch (set `cuda: "{asked}"` '
        "where torch has that build)",
        said=True,
    )


def _judge_conda_cuda(spec: str, rest: str, context: TorchContext) -> Verdict:
    asked = rest.lstrip("=<>!~").split(",")[0].rstrip(".*")
    if context.build is None or not asked:
        return Verdict("drop", f"{spec}: the CUDA runtime comes with torch's build")
    if context.build == "cpu":
        return Verdict(
            "refuse",
            f"{spec} asks for CUDA {asked}; envkit installs {context.said()}",
            f'set `cuda: "{asked}"`, or drop the line for a CPU box',
        )
    try:
        same = Version(asked).release[:2] == Version(context.build).release[:2]
    except InvalidVersion:
        same = False
    admits = conda_specifier(rest)  # a range (pytorch-cuda>=11.6) is met by any CUDA in it
    if same or (admits is not None and admits.contains(context.build, prereleases=True)):
        return Verdict("drop", f"{spec}: CUDA {context.build} comes with envkit's torch build")
    if compat.buildable_cuda(context.version, asked):
        return Verdict(
            "refuse",
            f"{spec} asks for CUDA {asked}; envkit installs {context.said()}",
            f'set `cuda: "{asked}"` in envkit.yaml, or change the line',
        )
    # no `cuda:` could give this torch that CUDA (no build, or no image of it): said, not lost
    why = f"{spec}: envkit cannot build torch {context.version} with the CUDA it asks for"
    return Verdict("drop", f"{why}; installed instead: {context.said()}", said=True)


def pyg_mismatch(url: str, context: TorchContext) -> str | None:
    """Why a PyG wheel page does not fit the torch envkit installs (its wheels are built for
    one torch minor and CUDA: another torch imports them and fails), or None."""
    page = PYG_PAGE.search(url)
    if page is None or context.version is None or context.wheel is None:
        return None
    minor = ".".join(context.version.split(".")[:2])
    if (page.group(1), page.group(2)) == (minor, context.wheel):
        return None
    return (
        f"PyG's wheels there are built for torch {page.group(1)} ({page.group(2)}); envkit "
        f"installs {context.said()}, which would not load them"
    )
