"""The commands on one project: init, render, build, up, down, status, ssh-config, doctor,
lock, diff and schema. Typer wiring only: each maps its flags onto one call in envkit/commands."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

from envkit.cli.complete import members
from envkit.cli.options import (
    BuildFlag,
    ConfigOption,
    JsonFlag,
    LockedFlag,
    LockFileOption,
    RegistryOption,
)


def init(
    path: Annotated[Path, typer.Option("--path", help="Where to write.")] = Path("envkit.yaml"),
    name: Annotated[str | None, typer.Option(help="Project name (default: the folder's).")] = None,
    preset: Annotated[str | None, typer.Option(help="Mirror preset (default: official).")] = None,
    torch: Annotated[str | None, typer.Option(help="torch release.")] = None,
    cuda: Annotated[str | None, typer.Option(help="CUDA version.")] = None,
    flavor: Annotated[str, typer.Option(help="pytorch | cuda | custom.")] = "pytorch",
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing file.")] = False,
    no_input: Annotated[
        bool, typer.Option("--no-input", help="Ask nothing, even on a terminal.")
    ] = False,
) -> None:
    """Write a commented starter envkit.yaml, using the project files it finds. On a terminal
    it asks for what no flag said (torch, CUDA, mirror, notebook, team).

    Example: envkit init --preset tuna --torch 2.4.1 --no-input"""
    import sys

    from envkit.commands.init import init as run_init

    interactive = not no_input and sys.stdin.isatty() and sys.stdout.isatty()
    raise typer.Exit(
        run_init(
            path,
            name=name,
            preset=preset,
            torch=torch,
            cuda=cuda,
            flavor=flavor,
            force=force,
            interactive=interactive,
        )
    )


def render(
    config: ConfigOption = None,
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Output directory (default: .envkit beside the config)."),
    ] = None,
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
    .devcontainer/devcontainer.json.

    Example: envkit render --check"""
    from envkit.commands.render import render as run_render

    raise typer.Exit(run_render(config, out, check, force))


def build(
    config: ConfigOption = None,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Render into this directory.")
    ] = None,
    tag: Annotated[str | None, typer.Option(help="Image tag (default envkit/NAME:latest).")] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Rebuild every layer.")] = False,
    build_arg: Annotated[
        list[str] | None, typer.Option("--build-arg", help="KEY=VALUE passed to the build.")
    ] = None,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="Print only the tag and id.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Progress as JSON lines.")] = False,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Show every step's output.")
    ] = False,
    locked: LockedFlag = False,
    lock_file: LockFileOption = None,
    builder: Annotated[
        Literal["auto", "buildkit", "classic"] | None,
        typer.Option(
            "--builder",
            help="buildkit (docker buildx: cache mounts), classic (the docker SDK's builder) or "
            "auto: BuildKit where the Docker CLI has buildx. Default: build.builder, auto.",
        ),
    ] = None,
    registry: RegistryOption = None,
    force_build: BuildFlag = False,
) -> None:
    """Render, then build the image on the Docker engine (progress step by step); where a
    registry is set and has the image these inputs build, pull it instead.

    Example: envkit build --builder buildkit --locked"""
    from envkit.commands.build import BuildRequest, run_build

    run_build(
        BuildRequest(
            config=config,
            out=out,
            tag=tag,
            no_cache=no_cache,
            build_args=tuple(build_arg or ()),
            quiet=quiet,
            as_json=as_json,
            verbose=verbose,
            locked=locked,
            lock_file=lock_file,
            builder=builder,
            registry=registry,
            force_build=force_build,
        )
    )


def up(
    config: ConfigOption = None,
    timeout: Annotated[float, typer.Option(help="Seconds to wait for sshd to be healthy.")] = 90.0,
    registry: RegistryOption = None,
    force_build: BuildFlag = False,
    as_json: JsonFlag = False,
) -> None:
    """Start the environment and wait until sshd is healthy; twice changes nothing. Where the
    image is missing, pull it from the registry (or build it with --build). --json: one object
    on stdout (each container's state, port and login), the progress on stderr.

    Example: envkit up --registry registry.lab:5000/team"""
    from envkit.commands.up import up as run_up

    raise typer.Exit(run_up(config, timeout, registry, force_build, as_json))


def down(
    config: ConfigOption = None,
    volumes: Annotated[
        bool, typer.Option("--volumes", help="Also remove host-key volumes.")
    ] = False,
) -> None:
    """Stop and remove the environment's containers (volumes kept unless --volumes).

    Example: envkit down --volumes"""
    from envkit.commands.down import down as run_down

    raise typer.Exit(run_down(config, volumes))


def status(config: ConfigOption = None, as_json: JsonFlag = False) -> None:
    """Each container (each member's, in per-member mode): state, health, ports, GPUs and their
    use, SSH sessions, notebook kernels and idle time; GPU processes outside envkit's
    containers. Exit 1 when no container exists.

    Example: envkit status --json | jq '.containers[] | {member, idle_s, sessions}'"""
    from envkit.commands.status import status as run_status

    raise typer.Exit(run_status(config, as_json))


def start(
    member: Annotated[
        str | None,
        typer.Argument(help="Only this member's container (default: all).", autocompletion=members),
    ] = None,
    config: ConfigOption = None,
    timeout: Annotated[float, typer.Option(help="Seconds to wait for sshd.")] = 60.0,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print nothing.")] = False,
) -> None:
    """Start stopped containers (team.idle_stop, a reboot) and wait for their sshd; creates
    nothing (that is `envkit up`). The ssh-config's Match block runs it as a member connects.

    Example: envkit start alice"""
    from envkit.commands.start import start as run_start

    raise typer.Exit(run_start(config, member, timeout, quiet))


def ssh_config(
    config: ConfigOption = None,
    member: Annotated[
        str | None, typer.Option(help="Only this team member's block.", autocompletion=members)
    ] = None,
    host: Annotated[
        str | None, typer.Option(help="HostName to write (default: localhost).")
    ] = None,
    identity: Annotated[str | None, typer.Option(help="IdentityFile to write.")] = None,
) -> None:
    """Print ~/.ssh/config blocks for the environment (OpenSSH, VS Code Remote-SSH).

    Example: envkit ssh-config --member alice --host gpu1.lab >> ~/.ssh/config"""
    from envkit.commands.ssh_config import ssh_config as run_ssh_config

    raise typer.Exit(run_ssh_config(config, member, host, identity))


def doctor(config: ConfigOption = None, as_json: JsonFlag = False) -> None:
    """Check this host before anything is built: engine, compose, NVIDIA runtime and driver
    against the image's CUDA, free disk, ports, and envkit.yaml. Exit 1 when something fails.

    Example: envkit doctor --json"""
    from envkit.commands.doctor import doctor as run_doctor

    raise typer.Exit(run_doctor(config, as_json))


def lock(
    config: ConfigOption = None,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Write here (default envkit.lock).")
    ] = None,
    tag: Annotated[str | None, typer.Option(help="Image to lock (default the built one).")] = None,
) -> None:
    """Lock the built image: base digest, apt, conda, pip (with sums) and torch, in envkit.lock.

    Example: envkit lock && git add envkit.lock"""
    from envkit.commands.lock import run_lock

    raise typer.Exit(run_lock(config, out, tag))


def diff(
    left: Annotated[str, typer.Argument(help="A lock file or a target URL (docker://NAME, ...).")],
    right: Annotated[str, typer.Argument(help="Another lock file or target URL.")],
    as_json: JsonFlag = False,
) -> None:
    """What differs between two locks, or a lock and a running target (exit 1 if anything).

    Example: envkit diff envkit.lock docker://my-env"""
    from envkit.commands.diff import run_diff

    raise typer.Exit(run_diff(left, right, as_json))


def schema() -> None:
    """Print the JSON Schema of envkit.yaml (for editors and CI).

    Example: envkit schema > envkit.schema.json"""
    from envkit.commands.schema import schema as run_schema

    raise typer.Exit(run_schema())
