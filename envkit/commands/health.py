"""`envkit health`: the node health mode (checks/health.py) run on this machine, or written out
as a self-contained program for Slurm's HealthCheckProgram (a shell script and the bundle beside
it: the nodes need python and torch, not envkit)."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass, replace
from pathlib import Path

from envkit import __version__
from envkit.checks.programs.health import DEFAULT_TIMEOUT_S
from envkit.commands import OURS
from envkit.errors import EnvkitError
from envkit.services.project import Project, project_or_defaults
from envkit.verify.bundle import build_bundle
from envkit.verify.request import ChecksRequest

MAX_TIMEOUT_S = 55.0  # Slurm kills a HealthCheckProgram after 60 s


@dataclass(frozen=True, kw_only=True)
class HealthRequest:
    config: str | None = None
    python: str | None = None
    drain: bool = False
    node: str | None = None
    timeout: float = DEFAULT_TIMEOUT_S
    write: Path | None = None
    baseline_reset: bool = False  # forget the node's recorded GPU topology first
    npd: bool = False  # node-problem-detector's plugin protocol (exit 0/1/2, 80 bytes)
    bundle: Path | None = None  # --bundle: the program runs the check in its image (ch-run)


def baseline_reset(value: str | None, program: Path | None) -> bool:
    """--baseline takes one value, and only for a run here (a written program must not forget
    the baseline on every health interval)."""
    if value is None:
        return False
    if value != "reset":
        raise EnvkitError(f"--baseline {value}: not a choice", "write --baseline reset")
    if program is not None:
        raise EnvkitError(
            "--baseline reset with --program would forget the baseline on every interval",
            "run `envkit health --baseline reset` once on the node instead",
        )
    return True


def _config_json(project: Project) -> str:
    settings = project.settings(ChecksRequest(bench=False)).elsewhere
    return json.dumps(settings.runner_config("local", None), sort_keys=True)


def _arguments(request: HealthRequest, config_json: str) -> list[str]:
    args = ["health", "--timeout", f"{request.timeout:g}", "--config", config_json]
    if request.drain:
        args.append("--drain")
    if request.node:
        args += ["--node", request.node]
    if request.baseline_reset:
        args += ["--baseline", "reset"]
    if request.npd:
        if request.drain:
            raise EnvkitError(
                "--npd with --drain: on Kubernetes the node condition is the verdict",
                "leave out --drain (a taint or NVSentinel-style controller acts on the condition)",
            )
        args.append("--npd")
    return args


def _program(path: Path, body: str) -> str:
    return (
        f"#!/bin/sh\n{OURS} {__version__}: node health for Slurm.\n"
        f"# slurm.conf:  HealthCheckProgram={path}\n"
        "#              HealthCheckInterval=300\n#              HealthCheckNodeState=ANY\n"
        "# Exit 0 healthy; else exit 1 and one line saying why (docs/cluster.md).\n" + body
    )


def _body(request: HealthRequest, python: str, checks: Path, project: Project) -> str:
    """Run the checks zip by the nodes' PYTHON, or in a bundle's image through ch-run."""
    config_json = _config_json(project)  # the settings envkit.yaml bakes into the program
    if request.bundle is None:
        return f"exec {shlex.join([python, str(checks), *_arguments(request, config_json)])}\n"
    from envkit.bundle.health import bundle_image, through_ch_run

    if request.npd:
        raise EnvkitError(
            "--npd is node-problem-detector's; --bundle writes a Slurm program", "drop one"
        )
    image = bundle_image(request.bundle, project.plan.signing_key, config_json)
    inside = request.python or f"{project.plan.python.bin_dir}/python"
    # The drain happens outside the image (no scontrol, no $SLURMD_NODENAME in it).
    args = _arguments(replace(request, drain=False, node=None), config_json)
    return through_ch_run(image, inside, checks, args, request.drain, request.node)


def _ours(path: Path) -> bool:
    """A program envkit wrote (its second line), or a checks bundle."""
    if path.suffix == ".zip":
        try:
            with zipfile.ZipFile(path) as archive:
                return "envkit_checks/main.py" in archive.namelist()
        except (OSError, zipfile.BadZipFile):
            return False
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return False
    return len(lines) > 1 and lines[1].startswith(OURS)


def _write(request: HealthRequest, python: str, project: Project) -> int:
    assert request.write is not None
    path = request.write.expanduser().resolve()
    bundle = path.with_name(path.name + ".zip")
    body = _body(request, python, bundle, project)  # its refusals before anything is written
    for existing in (path, bundle):
        if existing.exists() and not _ours(existing):
            raise EnvkitError(
                f"{existing} exists and was not written by envkit",
                "choose another path with --program, or move that file away",
            )
    path.parent.mkdir(parents=True, exist_ok=True)
    bundle.write_bytes(build_bundle())
    path.write_text(_program(path, body), encoding="utf-8")
    path.chmod(0o755)
    sys.stdout.write(
        f"wrote {path} and {bundle.name}\nslurm.conf:\n  HealthCheckProgram={path}\n"
        "  HealthCheckInterval=300\n  HealthCheckNodeState=ANY\n"
    )
    return 0


def run(request: HealthRequest) -> int:
    if not 5 <= request.timeout <= MAX_TIMEOUT_S:
        raise EnvkitError(
            f"--timeout {request.timeout:g} is out of range",
            f"choose 5 to {MAX_TIMEOUT_S:.0f} s: Slurm kills a health program after 60 s",
        )
    python = request.python or shutil.which("python3") or "python3"
    project = project_or_defaults(request.config)  # read once: the settings, the bundle's
    if request.write is not None:
        return _write(request, python, project)
    args = _arguments(request, _config_json(project))
    if request.bundle is not None:
        raise EnvkitError(
            "--bundle writes a program for the nodes", "add --program PATH (where they read it)"
        )
    with tempfile.TemporaryDirectory(prefix="envkit-health-") as folder:
        bundle = Path(folder) / "checks.zip"
        bundle.write_bytes(build_bundle())
        try:
            done = subprocess.run([python, str(bundle), *args], check=False, env=dict(os.environ))
        except FileNotFoundError:
            raise EnvkitError(
                f"{python} not found on this machine",
                "pass --python with an interpreter that has torch",
            ) from None
    return done.returncode
