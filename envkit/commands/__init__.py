"""One module per CLI command: each has a frozen, keyword-only request (`XRequest`) and
`run(request) -> int`, the exit code. A command with parts no other command uses is a package,
the command in its `__init__.py` and those parts beside it (init, up). cli/ fills the request
from the options; what several commands share lives in services/ (or beside the engine).

May import: any package above.
"""

from __future__ import annotations

import sys
from collections.abc import Callable


def terminal_input() -> Callable[[str], str] | None:
    """What asks the user a question: `input` on a terminal, None in a script (no one to ask)."""
    return input if sys.stdin.isatty() and sys.stderr.isatty() else None
