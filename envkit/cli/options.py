"""Options more than one command takes, declared once (a leaf: it imports nothing of envkit's, so
every CLI module can use it). Their help says what the code does: tests/unit/test_cli_help.py
compares it with the behaviour."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

# Where config_given/find_config look (envkit/config/load.py): --config, then $ENVKIT_CONFIG,
# then ./envkit.yaml.
CONFIG_HELP = "envkit.yaml to use (else $ENVKIT_CONFIG, else ./envkit.yaml)."
ConfigOption = Annotated[str | None, typer.Option("--config", "-c", help=CONFIG_HELP)]

JsonFlag = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]
QuietFlag = Annotated[bool, typer.Option("--quiet", "-q", help="Show only what did not pass.")]

HistoryFile = Annotated[
    Path | None,
    typer.Option(
        "--history-file", help="History database (default: $ENVKIT_HISTORY, else ~/.local/state)."
    ),
]
JsonReport = Annotated[Path | None, typer.Option("--json", help="Write the JSON report here.")]
JunitReport = Annotated[Path | None, typer.Option("--junit", help="Write JUnit XML here.")]
HtmlReport = Annotated[
    Path | None, typer.Option("--html", help="Write a self-contained HTML report here.")
]
Member = Annotated[
    str | None, typer.Option(help="Per-member mode: this member only (team.members[].name).")
]
RegistryOption = Annotated[
    str | None,
    typer.Option(
        "--registry",
        # No [/PATH]: typer's help is rich markup, where that reads as a closing tag.
        help="Registry to share the image through: HOST, HOST:PORT or HOST:PORT/PATH (default: "
        "registry: in envkit.yaml). Credentials: `docker login`.",
    ),
]
BuildFlag = Annotated[
    bool,
    typer.Option(
        "--build", help="Build here even where the registry has the image for these inputs."
    ),
]
LockedFlag = Annotated[
    bool, typer.Option("--locked", help="Install exactly what envkit.lock lists.")
]
LockFileOption = Annotated[
    Path | None,
    typer.Option("--lock-file", help="The lock for --locked (default envkit.lock)."),
]
