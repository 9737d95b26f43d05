"""The `envkit` command: typer wiring only. Each command maps its flags onto one core call in
envkit/commands; app.py registers them and turns an EnvkitError into one message and its exit
code (no traceback for a user's mistake); an engine refusal that reached the top is said in
words (engine.client.refused).

May import: commands, services, checks, targets, verify, durations, errors, engine."""

from typing import Any

from envkit.cli.entry import main

__all__ = ["app", "main"]


def __getattr__(name: str) -> Any:
    # The whole app is built on first use, not when `envkit` starts (entry.py builds only the
    # command a line names).
    if name == "app":
        from envkit.cli.whole_app import app

        return app
    raise AttributeError(name)
