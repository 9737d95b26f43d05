"""`envkit init`'s questions, asked only on a terminal and only for what no flag said: torch
and its CUDA build, the mirror, a notebook, the team. Each answer is checked by the same rule
the config applies, and a wrong one is explained and asked again, so the file init writes
always renders."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from pydantic import TypeAdapter, ValidationError

from envkit.catalog import compat
from envkit.catalog.mirrors import preset_names
from envkit.config.fields import UserName
from envkit.errors import EnvkitError, FieldError
from envkit.plan.box.keys import parse_public_key

T = TypeVar("T")
TRIES = 5
Read = Callable[[str], str]


@dataclass(frozen=True)
class Answers:
    torch: str | None
    cuda: str | None
    preset: str
    notebook: bool
    members: tuple[tuple[str, str], ...]  # (name, public key line)


def _ask(read: Read, prompt: str, default: str, check: Callable[[str], T]) -> T:
    for _ in range(TRIES):
        try:
            answer = read(f"{prompt} [{default}]: ").strip() or default
        except EOFError:
            raise EnvkitError(
                "init stopped: the terminal closed before every question had an answer",
                "answer the questions, or pass flags (--torch, --cuda, --preset) and --no-input",
            ) from None
        try:
            return check(answer)
        except FieldError as exc:
            sys.stdout.write(f"  {exc.problem}; {exc.fix}\n")
    raise EnvkitError(f"no usable answer to {prompt!r} in {TRIES} tries", "pass it as a flag")


def _preset(answer: str) -> str:
    if answer not in preset_names():
        raise FieldError(f"{answer!r} is not a preset", f"one of {', '.join(preset_names())}")
    return answer


def _yes(answer: str) -> bool:
    if answer.lower() not in ("y", "yes", "n", "no"):
        raise FieldError(f"{answer!r} is neither yes nor no", "answer y or n")
    return answer.lower().startswith("y")


def _member(pair: str) -> tuple[str, str]:
    name, _, key_file = pair.partition("=")
    try:
        TypeAdapter(UserName).validate_python(name)
    except ValidationError:
        raise FieldError(
            f"{name!r} is not a login name", "lowercase letters, digits, - and _"
        ) from None
    path = Path(key_file).expanduser()
    if not key_file or not path.is_file():
        raise FieldError(f"no key file {key_file!r} for {name}", "give NAME=PATH/TO/KEY.pub")
    line = path.read_text(errors="replace").strip().splitlines()[:1]
    parse_public_key(line[0] if line else "")  # FieldError: why sshd would not take it
    return name, line[0]


def _members(answer: str) -> tuple[tuple[str, str], ...]:
    return () if answer == "none" else tuple(_member(pair) for pair in answer.split())


def ask(
    read: Read, torch: str | None, cuda: str | None, preset: str | None, flavor: str
) -> Answers:
    try:  # a flag's value is checked before the question it answers
        table = compat.load_table()
        if torch is None:
            newest = compat.resolve_torch(table, None).version
            torch = _ask(
                read, "torch release", newest, lambda a: compat.resolve_torch(table, a).version
            )
        release = compat.resolve_torch(table, torch)
        if cuda is None:
            default = compat.resolve_cuda(table, release, None, flavor=flavor).version
            cuda = _ask(
                read,
                f"CUDA build of torch {torch} ({', '.join(release.cuda)}, or cpu)",
                default,
                lambda a: compat.resolve_cuda(table, release, a, flavor=flavor).version,
            )
    except FieldError as exc:
        raise EnvkitError(exc.problem, exc.fix) from None
    if preset is None:
        preset = _ask(read, f"mirror ({', '.join(preset_names())})", "official", _preset)
    notebook = _ask(read, "JupyterLab in the container (y/n)", "n", _yes)
    members = _ask(
        read, "team members besides you, as NAME=KEY.pub pairs (none: just you)", "none", _members
    )
    return Answers(torch, cuda, preset, notebook, members)
