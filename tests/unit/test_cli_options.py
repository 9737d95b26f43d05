"""The CLI reads well and speaks one language (issue 37): every command's help rendered at 80
and 120 columns has no line broken to a word or two, no Python type name, nothing cut off; a
boolean option shows no value; the same option has the same value, type and multiplicity in
every command, and the options declared once (cli/options.py) the same help; docs/cli.md is
the table the commands give."""

from __future__ import annotations

import re
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from envkit.cli import options
from envkit.cli.registry import build_app
from tests.helpers import REPO, script_module

app = build_app()

PYTHON_TYPES = re.compile(
    r"<(str|bool|int|float|path|list\[[^>]*\])>|\b(TEXT|INTEGER|FLOAT|BOOLEAN)\b|list\[|Optional\["
)


def _commands(group: Any, prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    found = []
    for name, sub in sorted((getattr(group, "commands", None) or {}).items()):
        found.append(((*prefix, name), sub))
        found += _commands(sub, (*prefix, name))
    return found


ROOT = typer.main.get_command(app)
COMMANDS = _commands(ROOT)
PATHS = [(), *[path for path, _ in COMMANDS]]


def _help(path: tuple[str, ...], width: int) -> str:
    result = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": str(width)})
    assert result.exit_code == 0, result.output
    return result.output


def _entries(text: str) -> list[list[str]]:
    """The help's blocks: an option's or a paragraph's first line and its continuation lines."""
    blocks: list[list[str]] = []
    for line in text.splitlines():
        if not line.strip():
            blocks.append([])
        elif blocks and line.startswith("   ") and (line.startswith(" " * 8) or not blocks[-1]):
            blocks[-1].append(line)
        else:
            blocks.append([line])
    return [b for b in blocks if b]


@pytest.mark.parametrize("width", [80, 120])
@pytest.mark.parametrize("path", PATHS, ids=lambda p: " ".join(p) or "envkit")
def test_help_reads_well_at_80_and_120_columns(path: tuple[str, ...], width: int) -> None:
    text = _help(path, width)
    lines = text.splitlines()
    assert not [line for line in lines if len(line) > width], "a line wider than the terminal"
    assert not PYTHON_TYPES.search(text), PYTHON_TYPES.search(text)
    if "Commands:" in text:  # click cuts a summary that does not fit with "..."
        listing = text.split("Commands:", 1)[1].splitlines()
        assert not [line for line in listing if line.rstrip().endswith("...")], "cut off"
    for block in _entries(text):
        if len(block) >= 3:
            words = [len(line.split()) for line in block]
            narrow = sum(1 for count in words if count <= 2)
            assert narrow * 2 < len(block), ("wrapped a word or two per line", block)
    assert "Example: envkit" in text or not path, "every command shows an example"


def test_the_top_level_list_is_one_line_per_command() -> None:
    text = _help((), 80)
    listing = text.split("Commands:", 1)[1].strip().splitlines()
    names = [line.split()[0] for line in listing]
    assert names == list(getattr(ROOT, "commands", {})), "one line per command, as registered"


def test_boolean_options_show_no_value() -> None:
    for path, command in COMMANDS:
        text = _help(path, 120)
        for param in command.params:
            if getattr(param, "is_flag", False) and param.opts[0].startswith("--"):
                name = max(param.opts, key=len)
                named = re.compile(rf"^\s+(-\w, )?{re.escape(name)}(\s|$)")
                row = next(line for line in text.splitlines() if named.search(line))
                after = row.split(name, 1)[1].split("  ")[0].strip()
                assert after == "" or after.startswith("/ --"), (path, row)


def _declared() -> dict[str, list[tuple[str, Any]]]:
    seen: dict[str, list[tuple[str, Any]]] = {}
    for path, command in COMMANDS:
        for param in command.params:
            if param.opts and param.opts[0].startswith("-") and param.name != "help":
                for name in param.opts:
                    seen.setdefault(name, []).append((" ".join(path), param))
    return seen


def _shape(param: Any) -> tuple[object, ...]:
    return (
        str(param.bare_type()) if callable(getattr(param, "bare_type", None)) else None,
        param.metavar,
        bool(getattr(param, "is_flag", False)),
        bool(getattr(param, "multiple", False)),
    )


OUTPUT_NAMES = ("-o", "--out", "--output")


def test_the_same_option_has_the_same_value_type_and_multiplicity_everywhere() -> None:
    differ = {}
    for name, uses in _declared().items():
        shapes = {(_shape(param)) for _, param in uses}
        if name in OUTPUT_NAMES:  # where the output goes: a folder of files, or the one file
            shapes = {(kind, "DIR", flag, many) for kind, _, flag, many in shapes}
        if len(shapes) > 1:
            differ[name] = [(where, _shape(param)) for where, param in uses]
    assert not differ, differ


def test_options_declared_once_say_the_same_everywhere() -> None:
    shared = {
        "--config": options.CONFIG_HELP,
        "--json": "Machine output: JSON on stdout (people's lines go to stderr).",
        "--quiet": "Say less: only what did not go as planned.",
        "--json-file": "Write the JSON report here.",
        "--registry": None,
        "--lock-file": None,
        "--member": None,
    }
    seen = _declared()
    for name, expected in shared.items():
        helps = {param.help for _, param in seen.get(name, [])}
        assert len(helps) == 1, (name, helps)
        if expected is not None:
            assert helps == {expected}, (name, helps)
    assert len(seen["--config"]) >= 19, "every command that reads envkit.yaml takes -c"
    assert all("-c" in param.opts for _, param in seen["--config"])


def test_the_consistency_check_can_fail() -> None:
    class Fake:
        metavar, is_flag, multiple = "PATH", False, False

        def bare_type(self) -> str:
            return "str"

    other = Fake()
    other.metavar = "DIR"
    assert _shape(Fake()) != _shape(other)


def test_docs_cli_md_is_the_table_the_commands_give() -> None:
    generator = script_module("gen_cli_doc")
    on_disk = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    assert generator.cli_doc() == on_disk, "run `python scripts/gen_cli_doc.py`"
