"""The commands on one project: init, render, build, up, down, start, status, ssh-config, doctor,
lock, diff and schema. Typer wiring only: each fills its command's frozen request and calls the
command's `run` (imported when the command runs, so `envkit --help` stays fast)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

from envkit.cli import complete
from envkit.cli.options import (
    BuildFlag,
    ConfigOption,
    JsonFlag,
    LockedFlag,
    LockFileOption,
    MemberArgument,
    MemberOption,
    OutDir,
    PlatformOption,
    QuietFlag,
    RegistryOption,
    SshWait,
    TagOption,
    VerboseFlag,
    YesFlag,
)

Progress = Literal["auto", "plain", "tty", "json"]


def init(
    config: ConfigOption = None,
    name: Annotated[
        str | None, typer.Option(metavar="NAME", help="Project name (default: the folder's).")
    ] = None,
    preset: Annotated[
        str | None, typer.Option(metavar="PRESET", help="Mirror preset (default: official).")
    ] = None,
    torch: Annotated[str | None, typer.Option(metavar="VERSION", help="torch release.")] = None,
    cuda: Annotated[
        str | None, typer.Option(metavar="VERSION", help="CUDA version, or cpu.")
    ] = None,
    flavor: Annotated[
        str, typer.Option(metavar="FLAVOR", help="Base image: pytorch, cuda or custom.")
    ] = "pytorch",
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing file.")] = False,
    no_input: Annotated[
        bool, typer.Option("--no-input", help="Ask nothing, even on a terminal.")
    ] = False,
) -> None:
    """Write a commented starter envkit.yaml (where -c/--config says), using the project files it
    finds. On a terminal it asks for what no option said (torch, CUDA, mirror, notebook, team).

    \b
    Example: envkit init --preset tuna --torch 2.4.1 --no-input
             envkit init -c services/train/envkit.yaml"""
    import os
    import sys

    from envkit.commands import init as command

    request = command.InitRequest(
        path=Path(config or os.environ.get("ENVKIT_CONFIG") or "envkit.yaml"),
        name=name,
        preset=preset,
        torch=torch,
        cuda=cuda,
        flavor=flavor,
        force=force,
        interactive=not no_input and sys.stdin.isatty() and sys.stdout.isatty(),
    )
    raise typer.Exit(command.run(request))


def render(
    config: ConfigOption = None,
    out: OutDir = None,
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="Write nothing; exit 1 if files on disk differ from a fresh render, or if "
            "envkit's folders hold files it did not write.",
        ),
    ] = False,
    force: Annotated[
        bool,
        typer.Option("--force", help="Replace files of envkit's names that envkit did not write."),
    ] = False,
) -> None:
    """Render the Dockerfile, compose file, environment.yml, mirror configs, and the project's
    .devcontainer/devcontainer.json. `envkit build --dry-run` also shows what a build would run.

    \b
    Example: envkit render --check"""
    from envkit.commands import render as command

    request = command.RenderRequest(config=config, out=out, check=check, force=force)
    raise typer.Exit(command.run(request))


NoCache = Annotated[bool, typer.Option("--no-cache", help="Rebuild every layer.")]
BuildArgs = Annotated[
    list[str] | None,
    typer.Option("--build-arg", metavar="KEY=VALUE", help="Passed to the build (repeatable)."),
]
ProgressOption = Annotated[
    Progress,
    typer.Option(
        "--progress",
        metavar="MODE",
        help="How steps are shown: tty (each step's duration as it ends, cached steps marked), "
        "plain (the same without colour), json (one object per line), or auto: tty on a "
        "terminal, plain elsewhere.",
    ),
]
DryRun = Annotated[
    bool,
    typer.Option(
        "--dry-run",
        help="Render and list the steps a build would run, and which the engine has cached; "
        "build nothing.",
    ),
]
BuilderOption = Annotated[
    Literal["auto", "buildkit", "classic"] | None,
    typer.Option(
        "--builder",
        metavar="BUILDER",
        help="buildkit (docker buildx: cache mounts), classic (the docker SDK's builder) or "
        "auto: BuildKit where the Docker CLI has buildx. Default: build.builder, auto.",
    ),
]


OfflineFlag = Annotated[
    bool,
    typer.Option(
        "--offline",
        help="Build from the bundle --from names alone: its lock, wheels and .debs; the build's "
        "steps get no network.",
    ),
]
FromBundle = Annotated[
    Path | None,
    typer.Option("--from", metavar="BUNDLE", help="The bundle `envkit bundle -o` made."),
]


def build(
    config: ConfigOption = None,
    out: OutDir = None,
    tag: TagOption = None,
    no_cache: NoCache = False,
    build_arg: BuildArgs = None,
    quiet: QuietFlag = False,
    as_json: JsonFlag = False,
    verbose: VerboseFlag = False,
    progress: ProgressOption = "auto",
    dry_run: DryRun = False,
    locked: LockedFlag = False,
    lock_file: LockFileOption = None,
    builder: BuilderOption = None,
    registry: RegistryOption = None,
    force_build: BuildFlag = False,
    platform: PlatformOption = None,
    offline: OfflineFlag = False,
    bundle: FromBundle = None,
) -> None:
    """Render, then build the image (each step's duration, a summary of where the time went);
    where a registry is set and has the image these inputs build, pull it instead.

    \b
    Example: envkit build --builder buildkit --locked
             envkit build --dry-run
             envkit build --offline --from /media/usb/nlp"""
    from envkit.commands import build as command

    if offline != (bundle is not None):
        said = "--offline needs --from BUNDLE" if offline else "--from BUNDLE goes with --offline"
        raise typer.BadParameter(said, param_hint="--offline/--from")

    request = command.BuildRequest(
        config=config,
        out=out,
        tag=tag,
        no_cache=no_cache,
        build_args=tuple(build_arg or ()),
        quiet=quiet,
        json=as_json or progress == "json",
        verbose=verbose,
        progress=progress,
        dry_run=dry_run,
        locked=locked,
        lock_file=lock_file,
        builder=builder,
        registry=registry,
        force_build=force_build,
        platform=platform,
        offline_from=bundle,
    )
    raise typer.Exit(command.run(request))


KeepRunning = Annotated[
    list[str] | None,
    typer.Option(
        "--keep-running",
        metavar="MEMBER",
        help="Leave this member's container as it is, whatever changed (repeatable).",
        autocompletion=complete.members,
    ),
]


def up(
    config: ConfigOption = None,
    timeout: SshWait = 90.0,
    registry: RegistryOption = None,
    force_build: BuildFlag = False,
    as_json: JsonFlag = False,
    keep_running: KeepRunning = None,
    yes: YesFlag = False,
) -> None:
    """Start the environment and wait until sshd is healthy; twice changes nothing. Where the
    image is missing, pull it from the registry (or build it with --build). --json: one object
    on stdout (each container's state, port and login), the progress on stderr. A container
    about to be recreated whose member installed packages by hand is named first (asked on a
    terminal, refused in a script without --yes); homes and caches are volumes and stay.

    \b
    Example: envkit up --registry registry.lab:5000/team
             envkit up --keep-running alice"""
    from envkit.commands import up as command

    request = command.UpRequest(
        config=config,
        timeout=timeout,
        registry=registry,
        build=force_build,
        json=as_json,
        yes=yes,
        keep_running=tuple(keep_running or ()),
    )
    raise typer.Exit(command.run(request))


def down(
    config: ConfigOption = None,
    volumes: Annotated[
        bool,
        typer.Option(
            "--volumes",
            help="Also delete the project's volumes (members' homes, the shared cache, host "
            "keys): named first, then only once the project's name is typed, or with --yes.",
        ),
    ] = False,
    yes: YesFlag = False,
) -> None:
    """Stop and remove the environment's containers. Members' homes, the shared cache and host
    keys are volumes and stay; the next `envkit up` finds every file where it was.

    \b
    Example: envkit down
             envkit backup && envkit down --volumes"""
    from envkit.commands import down as command

    raise typer.Exit(command.run(command.DownRequest(config=config, volumes=volumes, yes=yes)))


def status(config: ConfigOption = None, as_json: JsonFlag = False) -> None:
    """Each container (each member's, in per-member mode): state, health, ports, GPUs and their
    use, SSH sessions, notebook kernels and idle time; GPU processes outside envkit's
    containers. Exit 1 when no container exists.

    \b
    Example: envkit status --json | jq '.containers[] | {member, idle_s}'"""
    from envkit.commands import status as command

    raise typer.Exit(command.run(command.StatusRequest(config=config, json=as_json)))


def start(
    member: MemberArgument = None,
    config: ConfigOption = None,
    timeout: SshWait = 60.0,
    quiet: QuietFlag = False,
) -> None:
    """Start stopped containers (team.idle_stop, a reboot) and wait for their sshd; creates
    nothing (that is `envkit up`). The ssh-config's Match block runs it as a member connects.

    \b
    Example: envkit start alice"""
    from envkit.commands import start as command

    request = command.StartRequest(config=config, member=member, timeout=timeout, quiet=quiet)
    raise typer.Exit(command.run(request))


def ssh_config(
    config: ConfigOption = None,
    member: MemberOption = None,
    host: Annotated[
        str | None, typer.Option(metavar="HOST", help="HostName to write (default: localhost).")
    ] = None,
    identity: Annotated[
        str | None,
        typer.Option(
            metavar="PATH",
            help="IdentityFile to write (default: the private half of a key envkit.yaml "
            "authorizes, where this machine has it).",
        ),
    ] = None,
) -> None:
    """Print ~/.ssh/config blocks for the environment (OpenSSH, VS Code Remote-SSH).

    \b
    Example: envkit ssh-config --member alice --host gpu1.lab >> ~/.ssh/config"""
    from envkit.commands import ssh_config as command

    request = command.SshConfigRequest(config=config, member=member, host=host, identity=identity)
    raise typer.Exit(command.run(request))


def doctor(config: ConfigOption = None, as_json: JsonFlag = False) -> None:
    """Check this host before anything is built: engine, compose, NVIDIA runtime and driver
    against the image's CUDA, free disk, ports, and envkit.yaml. Exit 1 when something fails.

    \b
    Example: envkit doctor --json"""
    from envkit.commands import doctor as command

    raise typer.Exit(command.run(command.DoctorRequest(config=config, json=as_json)))


def lock(
    config: ConfigOption = None,
    lock_file: LockFileOption = None,
    tag: TagOption = None,
    platform: PlatformOption = None,
) -> None:
    """Lock the built image: base digest, apt, conda, pip (with sums) and torch, in envkit.lock.

    \b
    Example: envkit lock && git add envkit.lock"""
    from envkit.commands import lock as command

    request = command.LockRequest(config=config, lock_file=lock_file, tag=tag, platform=platform)
    raise typer.Exit(command.run(request))


def sbom(
    config: ConfigOption = None,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", metavar="FILE", help="Write it here (default: stdout)."),
    ] = None,
    format: Annotated[
        Literal["cyclonedx", "spdx"] | None,
        typer.Option(
            "--format",
            metavar="FORMAT",
            help="cyclonedx (1.6 JSON) or spdx (2.3 JSON); default: spdx for *.spdx.json, "
            "else cyclonedx.",
        ),
    ] = None,
    lock_file: LockFileOption = None,
    syft: Annotated[
        bool,
        typer.Option(
            "--syft",
            help="Also scan the built image with syft; exit 1 naming every package it finds "
            "that the SBOM lacks or has at another version.",
        ),
    ] = False,
) -> None:
    """The image's SBOM from its lock: the base by digest, every apt, conda and Python package
    with its purl and sums, torch's build, the mirrors.

    \b
    Example: envkit sbom -o sbom.cdx.json && envkit sbom -o sbom.spdx.json"""
    from envkit.commands import sbom as command

    request = command.SbomRequest(
        config=config, output=output, format=format, lock_file=lock_file, syft=syft
    )
    raise typer.Exit(command.run(request))


def diff(
    left: Annotated[
        str,
        typer.Argument(metavar="LEFT", help="A lock file or a target URL (docker://NAME, ...)."),
    ],
    right: Annotated[str, typer.Argument(metavar="RIGHT", help="Another lock file or target URL.")],
    as_json: JsonFlag = False,
    layers: Annotated[
        bool,
        typer.Option(
            "--layers",
            help="LEFT and RIGHT are images: name the layers, and the files in them, that differ "
            "(two builds of one lock).",
        ),
    ] = False,
) -> None:
    """What differs between two locks, or a lock and a running target (exit 1 if anything).

    \b
    Example: envkit diff envkit.lock docker://my-env
             envkit diff --layers envkit/app:latest envkit/app:rebuilt"""
    from envkit.commands import diff as command

    request = command.DiffRequest(left=left, right=right, json=as_json, layers=layers)
    raise typer.Exit(command.run(request))


def schema() -> None:
    """Print the JSON Schema of envkit.yaml (for editors and CI).

    \b
    Example: envkit schema > envkit.schema.json"""
    from envkit.commands import schema as command

    raise typer.Exit(command.run(command.SchemaRequest()))
