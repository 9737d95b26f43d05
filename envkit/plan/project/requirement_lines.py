"""A requirements file as pip reads it (its format: requirements, options, includes, hashes,
editable and URL lines), every logical line judged and the file rewritten for the build: torch and
its companions left to envkit's torch layer (plan/project/torch_lines.py), `-e .` installed from the
workspace at first start, `-e git+…#egg=name` installed as `name @ git+…`; everything else kept as
the project wrote it. Requirements are parsed with `packaging` (PEP 508: either quote style, extras,
markers, `name @ URL`). The file is never read by a shell: it reaches pip or uv as `-r FILE`. Every
problem is collected with its own line, so one run reports them all."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from urllib.parse import unquote, urlsplit

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename

from envkit.errors import ConfigIssue, file_issue
from envkit.plan.project.torch_lines import (
    TORCHES,
    TorchContext,
    Verdict,
    judge_pip,
    pyg_mismatch,
)

INCLUDE_OPTIONS = dict.fromkeys(("-r", "--requirement"), "requirement") | dict.fromkeys(
    ("-c", "--constraint"), "constraint"
)
INDEX_OPTIONS = ("-i", "--index-url", "--extra-index-url", "-f", "--find-links")
KEPT_OPTIONS = ("--pre", "--prefer-binary", "--only-binary", "--no-binary", "--require-hashes")
LINE_OPTIONS = ("--hash",)  # options a requirement's own line may carry
# pip's per-requirement build settings: applied to the line's package, which envkit's install
# would not do
REQUIREMENT_OPTIONS = ("--config-settings", "-C", "--global-option", "--install-option")
VCS = ("git+", "hg+", "svn+", "bzr+")
ARCHIVES = (".whl", ".tar.gz", ".tgz", ".zip", ".tar.bz2")
# A line pip takes as a path, not a name: a relative folder (`submodules/diff-rasterization`)
LOCAL_FOLDER = re.compile(r"[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)+/?")
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
EGG = re.compile(r"[#&]egg=([A-Za-z0-9][A-Za-z0-9._-]*)")
# Packages whose CUDA builds the PyTorch index carries beside torch's (PyPI has other builds, or
# none): a file naming one keeps its PyTorch index line.
TORCH_INDEX_PACKAGES = frozenset(
    (
        "xformers",
        "fbgemm-gpu",
        "fbgemm-gpu-genai",
        "torch-tensorrt",
        "torchrec",
        "torchao",
        "torchtext",
        "torchdata",
        "torchcodec",
    )
)


@dataclass
class FileReading:
    """What one file's lines asked, besides the rewritten text (what every file of a project
    asked, gathered before one error names every problem: plan/project/project_files.py)."""

    issues: list[ConfigIssue] = field(default_factory=list)
    includes: list[tuple[int, str]] = field(default_factory=list)  # (line, relative path)
    companions: list[str] = field(default_factory=list)  # torch's, to install beside it
    editable: list[str] = field(default_factory=list)  # folders, relative to the file's
    needs_git: bool = False
    notes: list[str] = field(default_factory=list)  # said by render, each with its line


COMMENT = re.compile(r"(^|\s+)#.*$")  # pip's COMMENT_RE
ENV_VAR = re.compile(r"\$\{[A-Z0-9_]+\}")  # what pip expands from its environment


def logical_lines(text: str) -> list[tuple[int, int, str]]:
    r"""pip's view (its join_lines, then ignore_comments): (first line, last line, the line) with
    backslash continuations joined, except that a comment line never continues (`# x \` ends
    where it ends; `pkg  # x \` does continue, and its comment then takes the next line, as in
    pip), a continuation at the end of the file still counts, and comments are dropped. A UTF-8
    byte order mark (a file saved on Windows) is not part of the first line."""
    lines: list[tuple[int, int, str]] = []
    pending: list[str] = []
    start = 0

    def take(first: int, last: int, joined: str) -> None:
        line = COMMENT.sub("", joined).strip()
        if line:
            lines.append((first, last, line))

    for number, raw in enumerate(text.removeprefix("\ufeff").splitlines(), 1):
        comment_line = COMMENT.match(raw) is not None  # pip's match: a line that is a comment
        if not raw.endswith("\\") or comment_line:
            if pending:
                take(start, number, "".join(pending) + (" " + raw if comment_line else raw))
                pending = []
            else:
                take(number, number, raw)
        else:
            if not pending:
                start = number
            pending.append(raw.strip("\\"))
    if pending:
        take(start, start + len(pending) - 1, "".join(pending))
    return lines


def option_of(line: str) -> tuple[str, str]:
    """("--name", "value") of an option line: "-r x", "--requirement=x", "-rx"."""
    if line.startswith("--"):
        name, _, value = line.partition("=") if "=" in line.split()[0] else line.partition(" ")
        return name.strip(), value.strip()
    return line[:2], line[2:].strip()


class RequirementsFile:
    def __init__(
        self, name: str, text: str, context: TorchContext, trusted: tuple[str, ...] = ()
    ) -> None:
        self.name, self.text, self.context, self.trusted = name, text, context, trusted
        self.reading = FileReading()
        self.rewrites: dict[tuple[int, int], str] = {}

    def read(self) -> tuple[str, FileReading]:
        for first, last, line in logical_lines(self.text):
            if CONTROL.search(line):
                self._issue(first, line, "a control character in the line", "remove it")
            elif ENV_VAR.search(line):
                self._issue(
                    first,
                    line,
                    "pip fills ${NAME} from the environment of the machine that runs it; the "
                    "image's build has no such variable (and a secret in it would stay in a layer)",
                    "write the value; for an index's credentials use a netrc "
                    "(docs/project-files.md, Per-package pip options)",
                )
            elif line.startswith("-"):
                self._option_line(first, last, line)
            else:
                self._requirement_line(first, last, line)
        lines = self.text.splitlines()
        for (first, last), text in self.rewrites.items():
            lines[first - 1] = text
            for number in range(first, last):
                lines[number] = ""  # the continuation lines of a replaced line
        return "\n".join(lines) + ("\n" if self.text.endswith("\n") or lines else ""), self.reading

    def _issue(self, line: int, value: str, problem: str, fix: str) -> None:
        self.reading.issues.append(file_issue(self.name, line, value[:120], problem, fix))

    def _replace(self, first: int, last: int, text: str) -> None:
        self.rewrites[(first, last)] = text

    def _option_line(self, first: int, last: int, line: str) -> None:
        name, value = option_of(line)
        if name in INCLUDE_OPTIONS and not value:
            self._issue(first, line, f"{name} names no file", f"write the file after {name}")
        elif name in INCLUDE_OPTIONS:
            self.reading.includes.append((first, value))
        elif name in ("-e", "--editable"):
            self._editable(first, last, line, value)
        elif name in INDEX_OPTIONS and self._torch_index(first, last, line, value):
            return
        elif name in INDEX_OPTIONS and (why := pyg_mismatch(value, self.context)):
            # the page PyG builds for envkit's torch instead: the file kept, the change said
            minor = ".".join(str(self.context.version).split(".")[:2])
            page = f"https://data.pyg.org/whl/torch-{minor}.0+{self.context.wheel}.html"
            self._replace(first, last, f"{name} {page}")
            self.reading.notes.append(f"{self.name}:{first}: {why}: taken from {page}")
        elif name in INDEX_OPTIONS:
            self._index(first, line, name, value)
        elif name == "--trusted-host":
            self._issue(
                first,
                line,
                "--trusted-host turns off TLS checks for that host",
                f"list it in envkit.yaml's mirrors.trusted_hosts: [{value}] (for a mirror on "
                "your own network), and remove the line",
            )
        elif name not in KEPT_OPTIONS:
            self._issue(
                first,
                line,
                f"the option {name} is not one envkit passes on",
                "keep requirements, -r/-c includes, -e, index and --find-links lines, --hash "
                "pins, and --pre/--prefer-binary/--only-binary/--no-binary/--require-hashes",
            )

    def _torch_index(self, first: int, last: int, line: str, url: str) -> bool:
        """A PyTorch index line is there for torch: where envkit installs torch, its layer
        takes torch and its companions from the index envkit.yaml says (mirrors.pytorch_index,
        else the PyTorch index of its CUDA build), and the file's other packages come from the
        configured mirror, not from this line. Kept where another line needs that index (a
        +cu121 build of xformers, a package only the PyTorch index has)."""
        if urlsplit(url).hostname != "download.pytorch.org" or not self.context.version:
            return False
        if self._needs_torch_index:
            return False
        self._replace(
            first,
            last,
            f"# envkit: {line}: torch's index; envkit's torch layer installs "
            f"{self.context.said()} and its companions, the rest comes from the mirror",
        )
        return True

    @cached_property
    def _needs_torch_index(self) -> bool:
        """Whether a line other than torch's and its companions' asks for a PyTorch index build
        (a local label: xformers==0.0.23+cu121) or names a package of that index's own."""
        for _, _, line in logical_lines(self.text):
            try:
                requirement = Requirement(_split_hashes(line)[0])
            except InvalidRequirement:
                continue
            name = canonicalize_name(requirement.name)
            if name in TORCHES:
                continue
            if name in TORCH_INDEX_PACKAGES or any("+" in s.version for s in requirement.specifier):
                return True
        return False

    def _index(self, line: int, text: str, name: str, url: str) -> None:
        parts = urlsplit(url)
        if parts.scheme == "https" or (parts.scheme == "http" and parts.hostname in self.trusted):
            return  # kept: pip and uv read it from the file, for this file's layer
        if parts.scheme == "http":
            self._issue(
                line,
                text,
                f"{name} over plain http: packages could be changed on the way",
                f"use https, or opt in with mirrors.trusted_hosts: [{parts.hostname}]",
            )
        else:
            self._issue(line, text, f"{name} needs an https URL", "write the index's https URL")

    def _editable(self, first: int, last: int, line: str, target: str) -> None:
        if target.startswith(VCS):
            egg = EGG.search(target)
            if not egg:
                self._issue(
                    first,
                    line,
                    "an editable VCS line without #egg=NAME",
                    "write it as `NAME @ git+URL` (installed at build; an image has no "
                    "checkout to edit)",
                )
                return
            url = EGG.sub("", target).rstrip("#&")
            self.reading.needs_git = True
            self._replace(first, last, f"{egg.group(1)} @ {url}  # envkit: was {line}")
            return
        if not target:
            self._issue(first, line, "-e names nothing", "write `-e .` for the project itself")
            return
        folder, _, extras = target.partition("[")
        if extras:  # installed with --no-deps at first start: the extras' packages are not
            self.reading.notes.append(
                f"{self.name}:{first}: {line}: the project installs from the workspace without "
                f"its dependencies; those of [{extras.rstrip(']')}] must be listed to be in the "
                "image"
            )
        if "://" in folder or folder.startswith("/") or ".." in folder.split("/"):
            self._issue(
                first,
                line,
                "an editable install of a folder outside the project",
                "install it with build.steps, or move it into the project",
            )
            return
        self.reading.editable.append(folder.rstrip("/") or ".")
        self._replace(
            first, last, f"# envkit: {line} is installed from the workspace at first start"
        )

    def _requirement_line(self, first: int, last: int, line: str) -> None:
        text = self._without_hashes(first, last, line)
        if text is None:
            return
        if text.startswith(VCS) or re.match(r"[a-z][a-z0-9+.-]*://", text) or text[:1] in "./":
            self._url_line(first, last, line, text)
            return
        if LOCAL_FOLDER.fullmatch(text):  # `submodules/ext`: a path to pip, not a name
            self._url_line(first, last, line, f"./{text}")
            return
        try:
            requirement = Requirement(text)
        except InvalidRequirement as exc:
            self._issue(
                first,
                line,
                # packaging's message, less the caret lines under it (a report is one line)
                f"not a requirement pip can read: {str(exc).splitlines()[0]}",
                "write it as PEP 508 does: NAME[extras] VERSIONS ; MARKERS, or NAME @ URL",
            )
            return
        if requirement.url and requirement.url.startswith(VCS):
            self.reading.needs_git = True
        if requirement.url and requirement.url.startswith("file:"):
            self._url_line(first, last, line, requirement.url)
            return
        verdict = judge_pip(requirement, self.context)
        if verdict.action == "refuse":
            self._issue(first, line, verdict.why, verdict.fix)
        elif verdict.action == "drop":
            self._dropped(first, last, line, requirement, verdict)
        elif verdict.said:  # kept, with what it means in this image
            self.reading.notes.append(f"{self.name}:{first}: {verdict.why}")

    def _dropped(
        self, first: int, last: int, line: str, requirement: Requirement, verdict: Verdict
    ) -> None:
        """A line envkit's torch layer stands for: a comment in the file, said aloud where
        it asked what no setting can give or named extras the layer does not install."""
        if verdict.companion:
            self.reading.companions.append(verdict.companion)
        if verdict.said:
            self.reading.notes.append(f"{self.name}:{first}: {verdict.why}")
        if requirement.extras and not requirement.url:
            self.reading.notes.append(
                f"{self.name}:{first}: {line}: envkit's torch layer installs "
                f"{requirement.name} without its extras; list the packages its "
                f"[{','.join(sorted(requirement.extras))}] extra adds to have them"
            )
        self._replace(first, last, f"# envkit: {verdict.why}")

    def _without_hashes(self, first: int, last: int, line: str) -> str | None:
        """The requirement of a line without its --hash options; None where it carries a build
        setting (said). pip ignores any other option on a requirement's line (--no-binary, -i):
        the build does too, and says so."""
        text, hashes, stray = _split_hashes(line)
        if stray and stray[0].split("=")[0] in REQUIREMENT_OPTIONS:
            problem = f"{stray[0]} on a requirement's line: a build setting envkit does not pass"
            self._issue(first, line, problem, "install the package in build.steps with it")
            return None
        if stray:
            self.reading.notes.append(
                f"{self.name}:{first}: {' '.join(stray)}: pip ignores an option on a "
                "requirement's line (one applies on a line of its own); installed without it"
            )
            self._replace(first, last, " ".join([text, *hashes]))
        return text

    def _url_line(self, first: int, last: int, text: str, url: str) -> None:
        line = first
        if url[:1] in "./" or url.startswith("file:"):
            folder = url.removeprefix("file:").removeprefix("//")
            if folder.endswith(ARCHIVES) or folder.startswith("/"):
                self._issue(
                    line,
                    text,
                    "a local path outside the project, or a file: the build context holds only "
                    "envkit's copy of the project's dependency files",
                    "publish it to an index, or install it in build.steps",
                )
                return
            # a folder of the project (a submodule's CUDA extension, a sibling package): the
            # image has no copy of it, so it is installed from the workspace at first start
            self.reading.notes.append(
                f"{self.name}:{line}: {text}: a folder of the project, installed editable from "
                "the workspace at first start (the image holds only the dependency files)"
            )
            self._editable(first, last, text, folder)
            return
        if url.startswith(VCS):
            self.reading.needs_git = True
        wheel = _wheel_name(url)
        if wheel is not None:  # a bare wheel URL: judged by the name in its file name
            try:
                verdict = judge_pip(Requirement(f"{wheel} @ {url}"), self.context)
            except InvalidRequirement:
                return
            if verdict.action == "refuse":
                self._issue(line, text, verdict.why, verdict.fix)


def _split_hashes(line: str) -> tuple[str, list[str], list[str]]:
    """(the requirement of a line, its --hash options as pip's parser takes them (`--hash=…`
    or `--hash …`), the words of any other option after it)."""
    kept: list[str] = []
    hashes: list[str] = []
    stray: list[str] = []
    words = iter(line.split())
    for word in words:
        if word == "--hash":
            hashes += [word, next(words, "")]
        elif word.startswith(LINE_OPTIONS):
            hashes.append(word)
        elif stray or (word.startswith("-") and kept):
            stray.append(word)
        else:
            kept.append(word)
    return " ".join(kept), hashes, stray


def _wheel_name(url: str) -> str | None:
    """The project a wheel URL's file name names (torch-2.1.0+cu118-….whl: torch), or None."""
    filename = unquote(urlsplit(url).path.rsplit("/", 1)[-1])
    if not filename.endswith(".whl"):
        return None
    try:
        return str(parse_wheel_filename(filename)[0])
    except InvalidWheelFilename:
        return None
