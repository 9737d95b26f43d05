"""`envkit backup`, `envkit restore` and `envkit member remove`: members' homes and the shared
cache, kept on volumes. Typer wiring only."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from envkit.cli import complete
from envkit.cli.options import ConfigOption, MemberOption, YesFlag

BackupFolder = Annotated[
    Path, typer.Option(metavar="DIR", help="Where the archives and their manifests go.")
]


def backup(
    members: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="[MEMBER]...",
            help="These members' homes (default: every home of the project).",
            autocompletion=complete.members,
            show_default=False,
        ),
    ] = None,
    config: ConfigOption = None,
    to: BackupFolder = Path("envkit-backups"),
    cache: Annotated[bool, typer.Option("--cache", help="The shared cache too.")] = False,
) -> None:
    """Back up members' homes (and the shared cache) from the engine: one .tar.gz each, owners
    and modes kept, with a manifest (sizes, sha256, the image it was taken from). Streams: a
    large home needs no room twice.

    \b
    Example: envkit backup alice --to /backups/lab"""
    from envkit.commands import backup as command

    request = command.BackupRequest(config=config, members=tuple(members or ()), to=to, cache=cache)
    raise typer.Exit(command.run(request))


def restore(
    archive: Annotated[
        Path, typer.Argument(metavar="ARCHIVE", help="A .tar.gz `envkit backup` wrote.")
    ],
    config: ConfigOption = None,
    member: MemberOption = None,
    force: Annotated[
        bool, typer.Option("--force", help="Restore into a volume that holds files or is in use.")
    ] = False,
) -> None:
    """Put a backup back into its volume (or --member's home): checked against its manifest's
    sha256 first; a volume with files in it, or in use, only with --force.

    \b
    Example: envkit restore envkit-backups/lab_lab-alice-home-2026....tar.gz"""
    from envkit.commands import restore as command

    request = command.RestoreRequest(config=config, archive=archive, member=member, force=force)
    raise typer.Exit(command.run(request))


member_app = typer.Typer(
    help="A member's data after they left team.members.\n\n\b\nExample: envkit member remove bob",
    no_args_is_help=True,
)


@member_app.command("remove", short_help="A departed member: their container, their home.")
def member_remove(
    name: Annotated[str, typer.Argument(metavar="NAME", help="The member (no longer listed).")],
    config: ConfigOption = None,
    delete_home: Annotated[
        bool,
        typer.Option(
            "--delete-home",
            help="Delete the member's home volume (after a backup; the name typed, or --yes).",
        ),
    ] = False,
    yes: YesFlag = False,
    backup_to: BackupFolder = Path("envkit-backups"),
    no_backup: Annotated[
        bool, typer.Option("--no-backup", help="With --delete-home: no backup first.")
    ] = False,
) -> None:
    """Remove what is left of a member who is no longer in team.members: their container, and
    with --delete-home their home (backed up first unless --no-backup). The only command that
    deletes a member's home.

    \b
    Example: envkit member remove bob --delete-home --backup-to /backups/lab"""
    from envkit.commands import member_remove as command

    request = command.MemberRemoveRequest(
        config=config,
        name=name,
        delete_home=delete_home,
        yes=yes,
        backup_to=backup_to,
        no_backup=no_backup,
    )
    raise typer.Exit(command.run(request))
