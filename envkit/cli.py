"""The `envkit` command. Thin: each command maps its flags onto one core call, and every
EnvkitError becomes one message and its exit code (no traceback for a user's mistake).
Heavy modules are imported inside commands so `envkit --help` stays fast."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from envkit import __version__
from envkit.cli_cluster import (
    SlurmFlag,
    SlurmGpus,
    SlurmNodelist,
    SlurmNodes,
    SlurmPartition,
    SlurmRuntime,
    SlurmTime,
    SlurmWait,
    SlurmWorkdir,
    health,
    k8s_app,
    slurm_request,
)
from envkit.cli_history import HistoryFile, history_app
from envkit.cli_lock import diff as diff_command
from envkit.cli_lock import lock as lock_command
from envkit.cli_notebook import notebook_app
from envkit.errors import EXIT_INTERRUPTED, EnvkitError
from envkit.targets import usage as target_usage
from envkit.verify.fleet import DEFAULT_PARALLEL

app = typer.Typer(
    name="envkit",
    help="One command from envkit.yaml to a running, verified GPU development environment.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)

ConfigOption = Annotated[
    str | None,
    typer.Option(
        "--config", "-c", help="envkit.yaml to use (else $ENVKIT_CONFIG, else ./envkit.yaml)."
    ),
]


def _version(value: bool) -> None:
    if value:
        typer.echo(f"envkit {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
) -> None:
    """envkit: render, build, run and verify GPU dev environments."""


@app.command()
def init(
    path: Annotated[Path, typer.Option("--path", help="Where to write.")] = Path("envkit.yaml"),
    name: Annotated[str | None, typer.Option(help="Project name (default: the folder's).")] = None,
    preset: Annotated[str, typer.Option(help="Mirror preset.")] = "official",
    torch: Annotated[str | None, typer.Option(help="torch release.")] = None,
    cuda: Annotated[str | None, typer.Option(help="CUDA version.")] = None,
    flavor: Annotated[str, typer.Option(help="pytorch | cuda | custom.")] = "pytorch",
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing file.")] = False,
) -> None:
    """Write a commented starter envkit.yaml."""
    from envkit.commands.init import init as run_init

    raise typer.Exit(
        run_init(path, name=name, preset=preset, torch=torch, cuda=cuda, flavor=flavor, force=force)
    )


@app.command()
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
    .devcontainer/devcontainer.json."""
    from envkit.commands.render import render as run_render

    raise typer.Exit(run_render(config, out, check, force))


@app.command()
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
    locked: Annotated[
        bool, typer.Option("--locked", help="Install exactly what envkit.lock lists.")
    ] = False,
    lock_file: Annotated[
        Path | None,
        typer.Option("--lock-file", help="The lock for --locked (default envkit.lock)."),
    ] = None,
) -> None:
    """Render, then build the image on the Docker engine (progress step by step)."""
    from envkit.commands.build import BuildRequest, run_build

    args = (config, out, tag, no_cache, tuple(build_arg or ()), quiet, as_json, verbose)
    run_build(BuildRequest(*args, locked=locked, lock_file=lock_file))


@app.command()
def up(
    config: ConfigOption = None,
    timeout: Annotated[float, typer.Option(help="Seconds to wait for sshd to be healthy.")] = 90.0,
) -> None:
    """Start the environment (compose) and wait until sshd is healthy; twice changes nothing."""
    from envkit.commands.up import up as run_up

    raise typer.Exit(run_up(config, timeout))


@app.command()
def down(
    config: ConfigOption = None,
    volumes: Annotated[
        bool, typer.Option("--volumes", help="Also remove host-key volumes.")
    ] = False,
) -> None:
    """Stop and remove the environment's containers (volumes kept unless --volumes)."""
    from envkit.commands.down import down as run_down

    raise typer.Exit(run_down(config, volumes))


@app.command()
def status(config: ConfigOption = None) -> None:
    """Show the environment's containers, their health and ports."""
    from envkit.commands.status import status as run_status

    raise typer.Exit(run_status(config))


@app.command("ssh-config")
def ssh_config(
    config: ConfigOption = None,
    member: Annotated[str | None, typer.Option(help="Only this team member's block.")] = None,
    host: Annotated[
        str | None, typer.Option(help="HostName to write (default: localhost).")
    ] = None,
    identity: Annotated[str | None, typer.Option(help="IdentityFile to write.")] = None,
) -> None:
    """Print ~/.ssh/config blocks for the environment (OpenSSH, VS Code Remote-SSH)."""
    from envkit.commands.ssh_config import ssh_config as run_ssh_config

    raise typer.Exit(run_ssh_config(config, member, host, identity))


compat_app = typer.Typer(
    help="Show the CUDA/PyTorch/image/driver table, resolve one request, or refresh it.",
    invoke_without_command=True,
    no_args_is_help=False,
)
app.add_typer(compat_app, name="compat")
app.add_typer(history_app, name="history")
app.add_typer(k8s_app, name="k8s")
app.add_typer(notebook_app, name="notebook")
app.command("health")(health)
app.command("lock")(lock_command)
app.command("diff")(diff_command)


@compat_app.callback()
def compat(
    ctx: typer.Context,
    torch: Annotated[str | None, typer.Option(help="Resolve this torch release.")] = None,
    cuda: Annotated[str | None, typer.Option(help="With --torch: this CUDA version.")] = None,
    flavor: Annotated[str, typer.Option(help="pytorch | cuda | custom (which base).")] = "pytorch",
    driver: Annotated[str | None, typer.Option(help="Judge this host driver version too.")] = None,
    mirrors: Annotated[
        bool, typer.Option("--mirrors", help="List mirror presets instead.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Show the CUDA/PyTorch/image/driver table, or resolve one request against it."""
    if ctx.invoked_subcommand is not None:
        return
    from envkit.commands.compat import compat as run_compat

    raise typer.Exit(run_compat(torch, cuda, flavor, driver, mirrors, as_json))


@compat_app.command("refresh")
def compat_refresh(
    table: Annotated[
        Path | None, typer.Option(help="compat.yaml to refresh (default: the installed one).")
    ] = None,
    write: Annotated[bool, typer.Option("--write", help="Write the result into --table.")] = False,
    replay: Annotated[
        Path | None, typer.Option(help="Read the sources from this recording, not the network.")
    ] = None,
    record: Annotated[
        Path | None, typer.Option(help="Keep every answer in this (new) folder for replay.")
    ] = None,
) -> None:
    """Rebuild the table's release rows from PyPI, the PyTorch wheel index and Docker Hub (driver
    minimums stay hand-kept) and print the diff."""
    from envkit.commands.compat_refresh import compat_refresh as run_refresh

    raise typer.Exit(run_refresh(table, write, replay, record))


@app.command()
def schema() -> None:
    """Print the JSON Schema of envkit.yaml (for editors and CI)."""
    from envkit.commands.schema import schema as run_schema

    raise typer.Exit(run_schema())


# verify's options, named here so the command reads as a list of them.
_Local = Annotated[bool, typer.Option("--local", help="Verify this machine.")]
_Targets = Annotated[
    list[str] | None, typer.Option("--target", "-t", help=f"{target_usage()} (repeatable).")
]
_Image = Annotated[str | None, typer.Option(help="Verify IMAGE in a throwaway container.")]
_Python = Annotated[str | None, typer.Option(help="Interpreter with torch (--local).")]
_Only = Annotated[list[str] | None, typer.Option(help="Only these check ids or groups.")]
_Skip = Annotated[list[str] | None, typer.Option(help="Skip these check ids or groups.")]
_Bench = Annotated[bool, typer.Option("--bench/--no-bench", help="Run the GPU benchmarks.")]
_RequireGpu = Annotated[
    bool | None, typer.Option("--require-gpu/--no-require-gpu", help="Override the spec.")
]
_ExpectedGpus = Annotated[int | None, typer.Option(help="Override verify.expected_gpus.")]
_JsonOut = Annotated[Path | None, typer.Option("--json", help="Write the JSON report here.")]
_JunitOut = Annotated[Path | None, typer.Option("--junit", help="Write JUnit XML here.")]
_Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="Show only what did not pass.")]
_TargetsFile = Annotated[
    Path | None,
    typer.Option("--targets", help="File with one target URL per line ('#' comments)."),
]
_Parallel = Annotated[int, typer.Option(help="How many targets to verify at once.")]
_TargetTimeout = Annotated[
    float | None, typer.Option(help="Seconds one target's suite may take (default 1800).")
]
_HtmlOut = Annotated[
    Path | None, typer.Option("--html", help="Write a self-contained HTML report here.")
]
_NoHistory = Annotated[bool, typer.Option("--no-history", help="Do not record this run.")]
_Baseline = Annotated[
    str | None,
    typer.Option(
        help="Flag figures worse than their baseline: auto (the median of the target's last "
        "passing runs on the same image and GPU), a run id from `envkit history`, or a "
        "`verify --json` report file."
    ),
]


@app.command()
def verify(
    config: ConfigOption = None,
    local: _Local = False,
    target: _Targets = None,
    image: _Image = None,
    python: _Python = None,
    only: _Only = None,
    skip: _Skip = None,
    bench: _Bench = True,
    require_gpu: _RequireGpu = None,
    expected_gpus: _ExpectedGpus = None,
    json_out: _JsonOut = None,
    junit_out: _JunitOut = None,
    quiet: _Quiet = False,
    targets_file: _TargetsFile = None,
    parallel: _Parallel = DEFAULT_PARALLEL,
    target_timeout: _TargetTimeout = None,
    html_out: _HtmlOut = None,
    no_history: _NoHistory = False,
    history_file: HistoryFile = None,
    baseline: _Baseline = None,
    slurm: SlurmFlag = False,
    slurm_nodes: SlurmNodes = None,
    slurm_nodelist: SlurmNodelist = None,
    slurm_partition: SlurmPartition = None,
    slurm_gpus_per_node: SlurmGpus = None,
    slurm_time: SlurmTime = None,
    slurm_runtime: SlurmRuntime = None,
    slurm_wait_s: SlurmWait = None,
    slurm_workdir: SlurmWorkdir = None,
) -> None:
    """Run the verification suite inside containers, over SSH, or on this machine; many targets
    at once with --targets or several --target; on a Slurm cluster's nodes with --slurm."""
    # The options are named as VerifyRequest's fields, but for the repeatable ones (tuples)
    # and --no-history (the request says whether to record). Taken before any import.
    given = dict(locals())
    from envkit.commands.verify import VerifyRequest, run_verify

    given.update(targets=tuple(target or ()), only=tuple(only or ()), skip=tuple(skip or ()))
    given["record"] = not given.pop("no_history")
    given["slurm"] = slurm_request(given)
    del given["target"]
    code = run_verify(VerifyRequest(**given))
    raise typer.Exit(code)


@app.command()
def doctor(
    config: ConfigOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the findings as JSON.")] = False,
) -> None:
    """Check this host before anything is built: engine, compose, NVIDIA runtime and driver
    against the image's CUDA, free disk, ports, and envkit.yaml. Exit 1 when something fails."""
    from envkit.commands.doctor import doctor as run_doctor

    raise typer.Exit(run_doctor(config, as_json))


def main() -> None:
    # typer handles usage errors (exit 2), --help and typer.Exit itself; envkit's own errors
    # propagate out of it and become one message and their exit code here.
    try:
        app()
    except EnvkitError as exc:
        typer.secho(f"error: {exc}", err=True, fg=typer.colors.RED)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:  # raised outside click's own handling
        _interrupted()
    except SystemExit as exc:
        if exc.code == EXIT_INTERRUPTED:  # click turns Ctrl-C into exit 130
            _interrupted()
        raise


def _interrupted() -> None:
    """Leave at once on Ctrl-C. Worker threads still blocked on a target (docker exec, SSH) would
    keep the interpreter alive until that target's deadline; once the interrupt has unwound the
    stack, nothing of ours is left to clean up, so they are abandoned."""
    import os
    import threading

    typer.echo("interrupted", err=True)
    if threading.active_count() > 1:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(EXIT_INTERRUPTED)
    sys.exit(EXIT_INTERRUPTED)
