"""`envkit shell`, `envkit exec`, `envkit logs` and `envkit notebook url`: into a running
container through the engine, no SSH key needed. Typer wiring only."""

from __future__ import annotations

from typing import Annotated

import typer

from envkit.cli.options import ConfigOption, MemberArgument, MemberOption


def shell(member: MemberArgument = None, config: ConfigOption = None) -> None:
    """An interactive login shell in the container, as the member's login user, in the
    workspace, with the environment an SSH login gets (the conda env, PATH). Needs access to
    the engine, not an SSH key.

    \b
    Example: envkit shell alice"""
    from envkit.commands import shell as command

    raise typer.Exit(command.run(command.ShellRequest(config=config, member=member)))


def exec_(
    words: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="[MEMBER] -- COMMAND...",
            help="The member (per-member mode), then the command and its arguments after --.",
        ),
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Run one command in the container, as the member's login user, in the workspace and the
    login environment; its exit code is envkit's. A terminal only where this side has one.

    \b
    Example: envkit exec -- python -c 'import torch; print(torch.__version__)'
             envkit exec alice -- nvidia-smi"""
    from envkit.commands import execute as command

    raise typer.Exit(command.run(command.ExecRequest(config=config, words=tuple(words or ()))))


def logs(
    member: MemberArgument = None,
    config: ConfigOption = None,
    follow: Annotated[
        bool, typer.Option("--follow", "-f", help="Keep printing new lines.")
    ] = False,
    tail: Annotated[
        int | None, typer.Option("--tail", "-n", metavar="N", help="Only the last N lines.")
    ] = None,
) -> None:
    """What the container printed: its entrypoint, sshd and notebook.

    \b
    Example: envkit logs alice -f"""
    from envkit.commands import logs as command

    request = command.LogsRequest(config=config, member=member, follow=follow, tail=tail)
    raise typer.Exit(command.run(request))


notebook_app = typer.Typer(
    help="JupyterLab in the environment: the URL with its token."
    "\n\n\b\nExample: envkit notebook url --member alice",
    no_args_is_help=True,
)


@notebook_app.command("url", short_help="The notebook's URL with its token.")
def url(config: ConfigOption = None, member: MemberOption = None) -> None:
    """Print the notebook's URL with its token (and TensorBoard's), for a browser on this host or
    at the end of the SSH tunnel `envkit ssh-config` sets up (LocalForward).

    \b
    Example: envkit notebook url --member alice"""
    from envkit.commands import notebook as command

    raise typer.Exit(command.run(command.NotebookUrlRequest(config=config, member=member)))
