"""How a positional argument shows in help, as click and the tools people use show it: its name
in words (LEFT, [MEMBER], LOG...), with no Python type after it. Typer 0.29 appends the type
(`LEFT <str>`) and wraps a required argument in braces (`{LEFT}`); these two methods of its
argument class are replaced once, here, before any help is rendered."""

from __future__ import annotations

from typing import Any

from typer.core import TyperArgument


def _usage_name(self: Any) -> str:
    name = str(self.display_name_raw)
    if not self.required and not name.startswith("["):
        name = f"[{name}]"
    if self.nargs != 1 and not name.endswith("...") and " " not in name:
        name += "..."
    return name


def _no_type(self: Any, ctx: Any) -> str:
    return ""  # the argument's name (its metavar) already says what it takes


def show_arguments_by_name() -> None:
    TyperArgument._usage_display_name = _usage_name  # type: ignore[method-assign]
    TyperArgument.display_type_rich = _no_type  # type: ignore[method-assign]
