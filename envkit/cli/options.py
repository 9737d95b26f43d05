"""Options more than one command takes, declared once: one name, one metavar, one help text and
one meaning everywhere (tests/unit/test_cli_options.py holds every command to it, and
docs/cli.md's table is generated from the commands themselves). A leaf: it imports nothing of
envkit's but the completion helpers, so every CLI module can use it.

The vocabulary: `-c/--config PATH` names envkit.yaml (init writes there); `--json` prints machine
output on stdout and people's lines on stderr; a report *file* is `--json-file`, `--junit`,
`--html`; `-q/--quiet` and `-v/--verbose` turn the people's lines down and up."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from envkit.cli import complete

# Where config_given/find_config look (envkit/config/load.py): --config, then $ENVKIT_CONFIG,
# then ./envkit.yaml.
CONFIG_HELP = "envkit.yaml to use (else $ENVKIT_CONFIG, else ./envkit.yaml)."
ConfigOption = Annotated[
    str | None, typer.Option("--config", "-c", metavar="PATH", help=CONFIG_HELP)
]

JsonFlag = Annotated[
    bool,
    typer.Option("--json", help="Machine output: JSON on stdout (people's lines go to stderr)."),
]
QuietFlag = Annotated[
    bool, typer.Option("--quiet", "-q", help="Say less: only what did not go as planned.")
]
VerboseFlag = Annotated[
    bool, typer.Option("--verbose", "-v", help="Say more: every step's output.")
]

HistoryFile = Annotated[
    Path | None,
    typer.Option(
        "--history-file",
        metavar="PATH",
        readable=False,  # envkit says itself what is wrong with it (a verify still runs)
        help="History database (default: $ENVKIT_HISTORY, else ~/.local/state).",
    ),
]
JsonFile = Annotated[
    Path | None, typer.Option("--json-file", metavar="PATH", help="Write the JSON report here.")
]
JunitReport = Annotated[
    Path | None, typer.Option("--junit", metavar="PATH", help="Write JUnit XML here.")
]
HtmlReport = Annotated[
    Path | None,
    typer.Option("--html", metavar="PATH", help="Write a self-contained HTML report here."),
]
MemberOption = Annotated[
    str | None,
    typer.Option(
        "--member",
        metavar="NAME",
        help="Per-member mode: this member only (team.members[].name).",
        autocompletion=complete.members,
    ),
]
MemberArgument = Annotated[
    str | None,
    typer.Argument(
        metavar="[MEMBER]",
        help="Per-member mode: this member's container (team.members[].name).",
        autocompletion=complete.members,
        show_default=False,
    ),
]
RegistryOption = Annotated[
    str | None,
    typer.Option(
        "--registry",
        metavar="REGISTRY",
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
PlatformOption = Annotated[
    str | None,
    typer.Option(
        "--platform",
        metavar="PLATFORM",
        help="Only this one of the config's platforms (linux/amd64, linux/arm64): a lock holds "
        "one platform's packages.",
    ),
]
LockFileOption = Annotated[
    Path | None,
    typer.Option(
        "--lock-file",
        metavar="PATH",
        help="The lock file (default: envkit.lock beside the config).",
    ),
]
OutDir = Annotated[
    Path | None,
    typer.Option(
        "--out",
        "-o",
        metavar="DIR",
        help="The build context's folder (default: .envkit beside the config).",
    ),
]
TagOption = Annotated[
    str | None,
    typer.Option("--tag", metavar="TAG", help="The image (default: envkit/NAME:latest)."),
]
SshWait = Annotated[
    float, typer.Option("--timeout", metavar="SECONDS", help="How long to wait for sshd.")
]
PythonOption = Annotated[
    str | None,
    typer.Option(
        "--python",
        metavar="PATH",
        help="Interpreter with torch (--local, ssh:// targets, the nodes of --slurm, health).",
    ),
]
YesFlag = Annotated[
    bool, typer.Option("--yes", "-y", help="Answer yes: go ahead without asking (scripts, CI).")
]
