"""`envkit notebook`: typer wiring only."""

from __future__ import annotations

import typer

from envkit.cli.options import ConfigOption, MemberOption

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
