"""`envkit completion [SHELL]`: the completion script for bash, zsh or fish (printed, or with
--install written where that shell reads completions). It completes commands, options, the
config's members, verify's targets and check ids; the shell asks envkit itself (`envkit` with
_ENVKIT_COMPLETE set), so a new member or check is known without reinstalling."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

from typer._completion_shared import get_completion_script, install

from envkit.errors import EnvkitError

PROG = "envkit"
COMPLETE_VAR = "_ENVKIT_COMPLETE"
SHELLS = ("bash", "zsh", "fish")


@dataclass(frozen=True, kw_only=True)
class CompletionRequest:
    shell: str | None = None  # default: the login shell ($SHELL)
    install: bool = False


def run(request: CompletionRequest) -> int:
    given = request.shell
    shell = given or Path(os.environ.get("SHELL", "")).name
    if shell not in SHELLS:
        said = f"{given!r} is not" if given else f"$SHELL ({shell or 'unset'}) is not"
        raise EnvkitError(f"{said} a shell envkit completes", f"name one: {', '.join(SHELLS)}")
    if not request.install:
        sys.stdout.write(
            get_completion_script(prog_name=PROG, complete_var=COMPLETE_VAR, shell=shell) + "\n"
        )
        return 0
    _, path = install(shell=shell, prog_name=PROG, complete_var=COMPLETE_VAR)
    sys.stdout.write(f"{shell} completion installed in {path}; open a new shell to use it\n")
    return 0
