"""One module per CLI command, and nothing else: each has a frozen, keyword-only request
(`XRequest`) and `run(request) -> int`, the exit code. cli/ fills the request from the options;
what several commands share lives in services/ (or beside the engine).

May import: any package above.
"""
