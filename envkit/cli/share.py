"""`envkit push` and `envkit pull`: the team's image in its registry. Typer wiring only."""

from __future__ import annotations

import typer

from envkit.cli.options import ConfigOption, LockedFlag, LockFileOption, RegistryOption


def push(
    config: ConfigOption = None,
    registry: RegistryOption = None,
    locked: LockedFlag = False,
    lock_file: LockFileOption = None,
) -> None:
    """Push the built image to the registry, tagged by a digest of its inputs (and latest):
    every machine with the same envkit.yaml and lock then pulls it instead of building.

    Example: envkit push --registry registry.lab:5000/team"""
    from envkit.commands.share import ShareRequest, run_push

    raise typer.Exit(run_push(ShareRequest(config, registry, locked, lock_file)))


def pull(
    config: ConfigOption = None,
    registry: RegistryOption = None,
    locked: LockedFlag = False,
    lock_file: LockFileOption = None,
) -> None:
    """Pull the image these inputs build from the registry and tag it as the project's image.

    Example: envkit pull --registry registry.lab:5000/team"""
    from envkit.commands.share import ShareRequest, run_pull

    raise typer.Exit(run_pull(ShareRequest(config, registry, locked, lock_file)))
