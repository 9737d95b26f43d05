"""The `envkit` command: typer wiring only. Each command maps its flags onto one core call in
envkit/commands; app.py registers them and turns an EnvkitError into one message and its exit
code (no traceback for a user's mistake); an engine refusal that reached the top is said in
words (engine.client.refused).

May import: commands, services, checks, targets, verify, durations, errors, engine."""

from envkit.cli.app import app, main

__all__ = ["app", "main"]
