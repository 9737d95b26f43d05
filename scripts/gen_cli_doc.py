"""Write docs/cli.md from the commands themselves: every command, its one-line summary, and a
table of its options (name, value, meaning). Run after changing an option; a test fails while
the doc and the CLI disagree."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DOC = REPO / "docs" / "cli.md"
HEAD = """# envkit's commands and options

Generated from the CLI by `scripts/gen_cli_doc.py`; `envkit COMMAND --help` says the same.
One vocabulary across commands (tests/unit/test_cli_options.py keeps it): `-c/--config PATH`
names envkit.yaml wherever one is read (`init` writes there); `--json` is machine output on
stdout, people's lines on stderr; report files are `--json-file`, `--junit`, `--html`;
`-q/--quiet` and `-v/--verbose` turn people's lines down and up. Exit codes: 0 all good,
1 checks failed (or, for `diff`, a difference), 2 bad usage or config, 3 engine or target
unreachable, 4 build failed, 130 interrupted.
"""


def _commands(group: Any, prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    found = []
    for name, sub in (getattr(group, "commands", None) or {}).items():
        found.append(((*prefix, name), sub))
        found += _commands(sub, (*prefix, name))
    return found


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _option_rows(command: Any) -> list[str]:
    rows = []
    for param in command.params:
        if param.name == "help" or getattr(param, "hidden", False):
            continue
        names = ", ".join(f"`{o}`" for o in [*param.opts, *getattr(param, "secondary_opts", [])])
        if not param.opts[0].startswith("-"):
            names = f"`{param.metavar or param.name.upper()}` (argument)"
            value = ""
        else:
            value = "" if getattr(param, "is_flag", False) else f"`{param.metavar}`"
        rows.append(f"| {names} | {value} | {_cell(getattr(param, 'help', None) or '')} |")
    return rows


def cli_doc() -> str:
    import typer

    from envkit.cli.registry import build_app

    root = typer.main.get_command(build_app())
    lines = [HEAD]
    for path, command in _commands(root):
        summary = command.get_short_help_str(limit=200)
        lines += [f"## `envkit {' '.join(path)}`", "", _cell(summary), ""]
        rows = _option_rows(command)
        if rows:
            lines += ["| option | value | meaning |", "|---|---|---|", *rows, ""]
    return "\n".join(lines).rstrip() + "\n"


def main() -> int:
    sys.path.insert(0, str(REPO))
    text = cli_doc()
    if not DOC.is_file() or DOC.read_text(encoding="utf-8") != text:
        DOC.write_text(text, encoding="utf-8")
        print(f"wrote {DOC.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
