"""The `envkit` command: typer wiring only. Each command maps its flags onto one core call in
envkit/commands; registry.py registers them, and entry.py turns an EnvkitError into one message
and its exit code (no traceback for a user's mistake); an engine refusal that reached the top is
said in words (engine.client.refused).

May import: commands, services, checks, targets, verify, durations, errors, engine."""

from envkit.cli.entry import main

__all__ = ["main"]
