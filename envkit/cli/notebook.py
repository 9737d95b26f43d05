"""`envkit notebook`: typer wiring only."""

from __future__ import annotations

from typing import Annotated

import typer

from envkit.cli.options import ConfigOption

notebook_app = typer.Typer(
    help="JupyterLab in the environment: the URL with its token.", no_args_is_help=True
)


@notebook_app.command("url")
def url(
    config: ConfigOption = None,
    member: Annotated[
        str | None, typer.Option(help="Per-member mode: whose server (team.members[].name).")
    ] = None,
) -> None:
    """Print the notebook's URL with its token (and TensorBoard's), for a browser on this host or
    at the end of the SSH tunnel `envkit ssh-config` sets up (LocalForward).

    Example: envkit notebook url --member alice"""
    from envkit.commands.notebook import notebook_url

    raise typer.Exit(notebook_url(config, member))
