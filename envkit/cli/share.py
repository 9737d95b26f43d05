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
        help="Sign with this cosign private key (cosign.key): push signs the pushed digest and "
        "attaches the SBOM and provenance; bundle signs its manifest. Its password: "
        "COSIGN_PASSWORD, else asked.",
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


def bundle(
    config: ConfigOption = None,
    sign: SignOption = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            metavar="DIR",
            help="A new or empty folder for the bundle (default: ./envkit-bundle).",
        ),
    ] = None,
    sif: Annotated[
        bool,
        typer.Option(
            "--sif", help="Also rootfs.sif: the SquashFS and the SBOM as Apptainer's SIF (siftool)."
        ),
    ] = False,
    squashfs: Annotated[
        bool,
        typer.Option(
            "--squashfs/--no-squashfs",
            help="rootfs.sqfs, for sites without an engine (--no-squashfs: minutes less to make).",
        ),
    ] = True,
) -> None:
    """Everything a site without internet needs for the built image: image.tar for engines,
    rootfs.sqfs for Charliecloud, the lock's wheels, .debs and conda packages, the lock, the
    SBOM, and a manifest of every file's sha256.

    \b
    Example: envkit bundle -o /media/usb/nlp
             envkit verify --bundle /media/usb/nlp   (on the other side)"""
    from envkit.commands import bundle as command

    where = out or Path("envkit-bundle")
    request = command.BundleRequest(config=config, out=where, sign=sign, sif=sif, squashfs=squashfs)
    raise typer.Exit(command.run(request))


def load(
    folder: Annotated[Path, typer.Argument(metavar="DIR", help="A folder `envkit bundle` made.")],
    config: ConfigOption = None,
) -> None:
    """Load a bundle's image into this machine's engine, once every file matches the manifest.

    \b
    Example: envkit load /media/usb/nlp && envkit verify --image envkit/nlp:latest"""
    from envkit.commands import load as command

    raise typer.Exit(command.run(command.LoadRequest(bundle=folder, config=config)))
