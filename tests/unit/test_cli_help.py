"""Every command's help is true: the options several commands share are declared once
(envkit/cli/options.py), and what `--config`'s help promises ($ENVKIT_CONFIG, then
./envkit.yaml) is what each command taking it does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from envkit.cli.options import CONFIG_HELP
from envkit.cli.registry import build_app

app = build_app()


def _commands(group: Any, prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    """Every command of the app's (typer's own click) tree, with its path."""
    found = [(prefix, group)] if prefix else []
    for name, sub in sorted((getattr(group, "commands", None) or {}).items()):
        found += _commands(sub, (*prefix, name))
    return found


COMMANDS = _commands(typer.main.get_command(app))
WITH_CONFIG = [
    path for path, command in COMMANDS if any(p.name == "config" for p in command.params)
]


def test_every_config_option_says_the_same_true_thing() -> None:
    helps = {
        " ".join(path): next(p for p in command.params if p.name == "config")
        for path, command in COMMANDS
        if any(p.name == "config" for p in command.params)
    }
    assert len(helps) >= 12, sorted(helps)  # every command on a project takes it
    wrong = {
        name: getattr(option, "help", None)
        for name, option in helps.items()
        if getattr(option, "help", None) != CONFIG_HELP
    }
    assert not wrong, wrong


@pytest.mark.parametrize("path", WITH_CONFIG, ids=[" ".join(p) for p in WITH_CONFIG])
def test_envkit_config_is_honoured_as_the_help_says(
    path: tuple[str, ...], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With only $ENVKIT_CONFIG pointing at a broken file, the command reads that file: its
    name appears in what the command says (the error, or doctor's finding)."""
    broken = tmp_path / "from-the-environment.yaml"
    broken.write_text("name: Not A Valid Name\n")
    monkeypatch.chdir(tmp_path)
    command = dict(COMMANDS)[path]
    required = [  # a placeholder for each required argument: the config is read before it
        "x" for p in command.params if not p.opts[0].startswith("-") and p.required
    ]
    result = CliRunner().invoke(
        app, [*path, *required], env={"ENVKIT_CONFIG": str(broken), "COLUMNS": "300"}
    )
    said = result.output + (str(result.exception) if result.exception else "")
    assert "from-the-environment.yaml" in said, (path, result.exit_code, said[-600:])


def test_every_command_has_help_with_what_it_does() -> None:
    empty = [" ".join(path) for path, command in COMMANDS if not (command.help or "").strip()]
    assert not empty, f"commands without help: {empty}"
