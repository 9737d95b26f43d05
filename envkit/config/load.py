"""Finding, reading and validating envkit.yaml, with every mistake mapped to its YAML line."""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from envkit.config import bounded
from envkit.config.model import Runtime, Spec
from envkit.config.rules import check_rules
from envkit.errors import ConfigError, ConfigIssue, EnvkitError, FieldError
from envkit.files import read_utf8

CONFIG_ENV = "ENVKIT_CONFIG"
DEFAULT_NAME = "envkit.yaml"
DETACHED_NAME = "adhoc"  # the project without an envkit.yaml
Loc = tuple[str | int, ...]


@dataclass(frozen=True)
class LoadedSpec:
    """A validated spec plus where it came from, so later stages can point at lines too."""

    spec: Spec
    path: Path
    lines: dict[Loc, int] = field(default_factory=dict)

    def issue(self, loc: Loc, problem: str, fix: str, value: object = None) -> ConfigIssue:
        return make_issue(loc, self.lines, problem, fix, value)

    def user_path(self, raw: str) -> Path:
        """A path from envkit.yaml: '~' expanded, relative ones taken from the file's folder."""
        path = Path(raw).expanduser()
        return path if path.is_absolute() else self.path.parent / path

    def error(self, loc: Loc, problem: FieldError, value: object = None) -> ConfigError:
        return ConfigError(str(self.path), [self.issue(loc, problem.problem, problem.fix, value)])

    @contextmanager
    def blaming(self, loc: Loc, value: object = None) -> Iterator[None]:
        """A FieldError raised inside is reported at LOC (with VALUE) as this file's error."""
        try:
            yield
        except FieldError as exc:
            raise self.error(loc, exc, value) from None


def find_config(explicit: str | None) -> Path:
    """--config beats ENVKIT_CONFIG beats ./envkit.yaml."""
    chosen = explicit or os.environ.get(CONFIG_ENV)
    path = Path(chosen) if chosen else Path(DEFAULT_NAME)
    if not path.is_file():
        origin = "--config" if explicit else (CONFIG_ENV if chosen else "the current directory")
        raise EnvkitError(
            f"no config at {path} (from {origin})",
            "run `envkit init` to write a starter envkit.yaml, or pass --config PATH",
        )
    return path


def detached() -> LoadedSpec:
    """The project when there is no envkit.yaml (verify, health, doctor work without one): the
    model's defaults, named adhoc, with no GPUs asked for. A run without a config demands of the
    machine's GPUs only what its command line does (--require-gpu, --expected-gpus)."""
    spec = Spec(name=DETACHED_NAME, runtime=Runtime(gpus="none"))
    return LoadedSpec(spec, Path.cwd() / DEFAULT_NAME)


def config_given(explicit: str | None) -> bool:
    """Whether the user points at a config at all (--config, ENVKIT_CONFIG, ./envkit.yaml).
    Commands that also work without one (verify, doctor) ask this before `load_spec`, which
    treats a missing config as an error."""
    return bool(explicit or os.environ.get(CONFIG_ENV) or Path(DEFAULT_NAME).is_file())


def dotted(loc: Loc) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def _short(value: object) -> str:
    # A URL's user:password@ is never shown back, wherever it was written.
    text = re.sub(r"//[^/@\s'\"]+@", "//***@", repr(value))
    return text if len(text) <= 60 else text[:57] + "..."


def make_issue(
    loc: Loc, lines: dict[Loc, int], problem: str, fix: str, value: object = None
) -> ConfigIssue:
    # The nearest enclosing node that has a line.
    line = next((lines[loc[:cut]] for cut in range(len(loc), -1, -1) if loc[:cut] in lines), None)
    shown = None if value is None else _short(value)
    return ConfigIssue(path=dotted(loc), line=line, value=shown, problem=problem, fix=fix)


def parse_yaml(text: str, source: str) -> tuple[Any, dict[Loc, int]]:
    """The data and each field's line; bounded (see config/bounded.py)."""
    try:
        problem, data, lines = bounded.load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(source, [_yaml_issue(exc, text)]) from None
    if problem is not None:
        raise ConfigError(source, [problem])
    return data, lines


def _yaml_issue(exc: yaml.YAMLError, text: str) -> ConfigIssue:
    mark = getattr(exc, "problem_mark", None)
    line = mark.line + 1 if mark is not None else None
    position = getattr(exc, "position", None)  # ReaderError: a NUL or other forbidden character
    if line is None and isinstance(position, int):
        line = text.count("\n", 0, position) + 1
    reason = getattr(exc, "problem", None) or getattr(exc, "reason", None) or type(exc).__name__
    if "nesting depth" in str(reason):  # libyaml's own limit can come before envkit's
        return bounded.too_deep(line)
    return ConfigIssue(
        path="(file)",
        line=line,
        value=None,
        problem=f"not valid YAML: {reason}",
        fix="check indentation and quoting on that line (values with ':' or '#' need quotes; "
        "control characters such as NUL are not allowed)",
    )


def _known_fields(loc: Loc) -> list[str]:
    model: type[BaseModel] = Spec
    for part in loc:
        if isinstance(part, int):
            continue
        info = model.model_fields.get(str(part))
        inner = _model_of(info.annotation) if info else None
        if inner is None:
            return []
        model = inner
    return list(model.model_fields)


def _model_of(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        found = _model_of(arg)
        if found is not None:
            return found
    return None


_TYPE_ERRORS = ("string_type", "int_type", "int_parsing", "bool_type", "bool_parsing", "float_type")
_SHAPE_ERRORS = ("tuple_type", "list_type", "dict_type", "model_type", "string_type")


def explain(error: ErrorDetails) -> tuple[str, str]:
    """Turn one pydantic error into (problem, fix)."""
    kind = error["type"]
    loc = error["loc"]
    exc = (error.get("ctx") or {}).get("error")
    if isinstance(exc, FieldError):
        return exc.problem, exc.fix
    if kind == "extra_forbidden":
        known = _known_fields(loc[:-1])
        close = difflib.get_close_matches(str(loc[-1]), known, n=1)
        hint = f"did you mean '{close[0]}'? " if close else ""
        return "unknown field", f"{hint}remove it; fields here: {', '.join(known)}"
    if kind == "missing":
        return "required field is missing", f"add `{loc[-1]}:` (see `envkit schema`)"
    if kind == "literal_error":
        expected = (error.get("ctx") or {}).get("expected", "")
        return "not one of the allowed values", f"use {expected}"
    if kind in _TYPE_ERRORS:
        wanted = {"string": "quoted string", "int": "whole number", "bool": "true or false"}
        word = wanted.get(kind.split("_")[0], "number")
        if tuple(loc) == ("torch",) and isinstance(error.get("input"), dict):
            # `torch: {build: cpu}`, as some tools write it: envkit says the build with cuda:
            return (
                f"wrong type ({error['msg']})",
                'torch is a release, e.g. torch: "2.5.1" (or "none"); its build is cuda: '
                '"12.4", or cuda: "cpu" for a CPU torch',
            )
        return f"wrong type ({error['msg']})", f"write a {word} here"
    if kind in ("less_than_equal", "greater_than_equal", "too_short", "too_long"):
        return error["msg"], "use a value inside that range"
    if kind in _SHAPE_ERRORS:  # string_type is answered above, as a wrong type
        return (
            f"wrong shape ({error['msg']})",
            "see `envkit schema` or `envkit init` for the layout",
        )
    return error["msg"], "see `envkit schema` for what this field accepts"


def _issues_from(exc: ValidationError, lines: dict[Loc, int]) -> list[ConfigIssue]:
    issues: list[ConfigIssue] = []
    seen: set[str] = set()
    for error in exc.errors():
        loc: Loc = tuple(p for p in error["loc"] if not _is_union_tag(p))
        problem, fix = explain(error)
        key = dotted(loc) + problem
        if key in seen:  # a union reports one mistake once per member type
            continue
        seen.add(key)
        value = None if error["type"] in ("missing", "extra_forbidden") else error.get("input")
        if isinstance(value, (dict, list)) and error["type"] not in _SHAPE_ERRORS:
            value = None  # a rule over a whole section: the problem names what is wrong in it
        issues.append(make_issue(loc, lines, problem, fix, value))
    return sorted(issues, key=lambda issue: issue.line or 0)


def _is_union_tag(part: str | int) -> bool:
    # pydantic adds union member names ('literal['all','none']', 'int', 'tuple[...]') to locs,
    # and a discriminated union its tag (envkit's tags start with 'union:').
    return isinstance(part, str) and (
        "[" in part or part.startswith("union:") or part in ("int", "str", "constrained-int")
    )


def _flavor_that_fits(spec: Spec) -> Spec:
    """A base flavor the user did not choose follows the config instead of refusing it:
    pytorch/pytorch images carry torch and are x86 only, so `torch: none` or an arm64 platform
    takes the cuda flavor (make_plan says so)."""
    arm = any(p.endswith("arm64") for p in spec.platforms or ())
    if "flavor" in spec.base.model_fields_set or (spec.torch != "none" and not arm):
        return spec
    return spec.model_copy(update={"base": spec.base.model_copy(update={"flavor": "cuda"})})


def load_text(text: str, source: str = DEFAULT_NAME, path: Path | None = None) -> LoadedSpec:
    data, lines = parse_yaml(text, source)
    data = {} if data is None else data
    if not isinstance(data, dict):
        fix = "start with `name: my-project` (run `envkit init` for a starter)"
        issue = ConfigIssue("(file)", 1, None, "the file must be a mapping of fields", fix)
        raise ConfigError(source, [issue])
    try:
        spec = Spec.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(source, _issues_from(exc, lines)) from None
    spec = _flavor_that_fits(spec)
    broken = check_rules(spec)
    if broken:
        issues = [
            make_issue(loc, lines, problem, fix, value) for loc, problem, fix, value in broken
        ]
        raise ConfigError(source, sorted(issues, key=lambda issue: issue.line or 0))
    return LoadedSpec(spec=spec, path=path or Path(source), lines=lines)


def load_spec(explicit: str | None = None) -> LoadedSpec:
    path = find_config(explicit)
    text, bad_line = read_utf8(path, bounded.CONFIG_LIMIT, "config file")
    if text is None:
        issue = ConfigIssue("(file)", bad_line, None, "not UTF-8 text", "save the file as UTF-8")
        raise ConfigError(str(path), [issue])
    return load_text(text, source=str(path), path=path)
