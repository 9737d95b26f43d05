"""`envkit push` and `envkit pull`: the team's image in its registry. Typer wiring only."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from envkit.cli.options import ConfigOption, LockedFlag, LockFileOption, RegistryOption

SignOption = Annotated[
    Path | None,
    typer.Option(
        "--sign",
        metavar="KEY",
        help="Sign the pushed digest with this cosign private key (cosign.key), and attach the "
        "SBOM and provenance, signed. Its password: COSIGN_PASSWORD, else asked.",
    ),
]


def push(
    config: ConfigOption = None,
    registry: RegistryOption = None,
    locked: LockedFlag = False,
    lock_file: LockFileOption = None,
    sign: SignOption = None,
) -> None:
    """Push the built image to the registry, tagged by a digest of its inputs (and latest):
    every machine with the same envkit.yaml and lock then pulls it instead of building.

    \b
    Example: envkit push --registry registry.lab:5000/team --sign cosign.key"""
    from envkit.commands import push as command

    request = command.PushRequest(
        config=config, registry=registry, locked=locked, lock_file=lock_file, sign=sign
    )
    raise typer.Exit(command.run(request))


def pull(
    config: ConfigOption = None,
    registry: RegistryOption = None,
    locked: LockedFlag = False,
    lock_file: LockFileOption = None,
) -> None:
    """Pull the image these inputs build from the registry and tag it as the project's image.

    \b
    Example: envkit pull --registry registry.lab:5000/team"""
    from envkit.commands import pull as command

    request = command.PullRequest(
        config=config, registry=registry, locked=locked, lock_file=lock_file
    )
    raise typer.Exit(command.run(request))
