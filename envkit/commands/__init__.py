"""One module per CLI command: each has a frozen, keyword-only request (`XRequest`) and
`run(request) -> int`, the exit code. A command with parts no other command uses is a package,
the command in its `__init__.py` and those parts beside it (init, up). cli/ fills the request
from the options; what several commands share lives in services/ (or beside the engine).

May import: any package above.
"""
