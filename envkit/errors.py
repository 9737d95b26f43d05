"""One error root for everything envkit tells a user; each carries its exit code and its fix.

Exit codes are a contract (docs/architecture.md): 0 good, 1 checks failed, 2 bad usage or config,
3 engine or target unreachable, 4 build failed.

May import: nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

EXIT_OK = 0
EXIT_CHECKS_FAILED = 1
EXIT_USAGE = 2
EXIT_UNREACHABLE = 3
EXIT_BUILD_FAILED = 4
EXIT_INTERRUPTED = 130  # Ctrl-C, as shells report a SIGINT death


class EnvkitError(Exception):
    """A problem a user can act on. The CLI prints `str(self)` and exits with `exit_code`."""

    exit_code = EXIT_USAGE

    def __init__(self, message: str, fix: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.fix = fix

    def __str__(self) -> str:
        return f"{self.message}\n  fix: {self.fix}" if self.fix else self.message


class ImageMissingError(EnvkitError):
    """An image envkit needs is not on the engine: the user builds, pulls or loads it (exit 2,
    wherever it is found missing: build's base, up, lock, verify --image)."""


class FieldError(ValueError):
    """One value failed a check; `fix` tells the user what to write instead. Raised by field
    validators (pydantic wraps it), the catalogue and the plan; the config loader turns it into
    a ConfigIssue with the field's path and line."""

    def __init__(self, problem: str, fix: str) -> None:
        super().__init__(problem)
        self.problem = problem
        self.fix = fix


@dataclass(frozen=True)
class ConfigIssue:
    """One mistake in envkit.yaml: where it is, what was there, and how to mend it."""

    path: str  # dotted field path, e.g. "mirrors.preset" or "team.members[1].port"
    line: int | None  # 1-based line in the YAML file, when known
    value: str | None  # the offending value, shortened for display
    problem: str
    fix: str
    file: str | None = None  # a project file the issue is in, when not envkit.yaml itself

    def render(self, source: str) -> str:
        place = self.file or source
        where = f"{place}:{self.line}" if self.line else place
        shown = f" (got {self.value})" if self.value is not None else ""
        field = "" if self.file and self.path == self.file else f" {self.path}:"
        return f"{where}:{field} {self.problem}{shown}\n  fix: {self.fix}"


def file_issue(
    name: str, line: int | None, value: str | None, problem: str, fix: str
) -> ConfigIssue:
    """An issue in a project's own file (a requirements file, pyproject.toml, uv.lock)."""
    return ConfigIssue(name, line, value, problem, fix, file=name)


class ConfigError(EnvkitError):
    """envkit.yaml is invalid. Holds every issue found so the user fixes them in one pass."""

    def __init__(self, source: str, issues: list[ConfigIssue]) -> None:
        self.source = source
        self.issues = issues
        super().__init__("\n".join(issue.render(source) for issue in issues))

    def __str__(self) -> str:
        count = len(self.issues)
        head = f"{self.source} is invalid ({count} problem{'s' if count != 1 else ''}):"
        return head + "\n" + self.message


def in_file(name: str, line: int, problem: str, fix: str, value: str | None = None) -> ConfigError:
    """A project's own file refused at one of its lines (its only issue)."""
    return ConfigError(name, [file_issue(name, line, value, problem, fix)])


class EngineUnreachableError(EnvkitError):
    exit_code = EXIT_UNREACHABLE


class ClusterUnreachableError(EnvkitError):
    """The scheduler's client tools are missing here or its controller does not answer."""

    exit_code = EXIT_UNREACHABLE


class BuildFailedError(EnvkitError):
    exit_code = EXIT_BUILD_FAILED
