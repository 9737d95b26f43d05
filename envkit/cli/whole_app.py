"""The whole app: every command and sub-app registered (envkit/cli/registry.py), for help,
completion and the tests and docs that read the full command tree. `envkit` itself starts at
envkit/cli/entry.py, which builds only the command a line names."""

from __future__ import annotations

from envkit.cli.registry import build_app

app = build_app()
