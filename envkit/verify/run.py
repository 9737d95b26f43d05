"""Run the checks bundle on targets and gather one report (schema in docs/architecture.md)."""

from __future__ import annotations

import contextlib
import json
import posixpath
import secrets
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from envkit.checks.core.contract import TargetReport
from envkit.errors import EnvkitError
from envkit.targets.base import CommandResult, Target
from envkit.verify.bundle import build_bundle
from envkit.verify.reports import entering_report
from envkit.verify.resolve import SUITE_TIMEOUT_S, VerifySettings


def _find_python(target: Target, wanted: str | None) -> str:
    if wanted:
        return wanted
    found = target.run(["sh", "-c", "command -v python3 || command -v python"], timeout=60)
    path = found.stdout.strip().splitlines()[:1]
    if found.exit_code != 0 or not path:
        raise EnvkitError(
            f"{target.name} has no python3 or python on its PATH",
            "verify an image with python and torch, or pass --python PATH",
        )
    return path[0]


def _put_user_checks(target: Target, directory: Path, remote_root: str) -> str:
    for path in sorted(directory.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            remote = posixpath.join(remote_root, *path.relative_to(directory).parts)
            target.put(path.read_bytes(), remote)
    return remote_root


# Runs the suite inside the target (remote_wrapper.sh says how), as `sh -c`'s program.
REMOTE_WRAPPER = (Path(__file__).parent / "remote_wrapper.sh").read_text(encoding="utf-8")
REPORT_MARKER = "@@envkit-report@@"
GRACE_S = 10.0  # the client's deadline for the suite's exec: the in-target limit plus this


def _remote_dir() -> str:
    return f"/tmp/envkit-run-{secrets.token_hex(6)}"  # noqa: S108 - the target's tmp, random name


def abort_remote(target: Target, remote_dir: str) -> None:
    """Best effort, on Ctrl-C: end the suite the wrapper started and remove its folder."""
    script = f'kill -TERM "$(cat {remote_dir}/pid 2>/dev/null)" 2>/dev/null; rm -rf {remote_dir}'
    with contextlib.suppress(Exception):  # the run is being abandoned; nothing more to do
        target.run(["sh", "-c", script], timeout=5)


def _read_report(target: Target, result: CommandResult, limit: float) -> Any:
    _, marker, text = result.stdout.partition("\n" + REPORT_MARKER + "\n")
    if marker:
        with contextlib.suppress(ValueError):
            return json.loads(text)
    if (died := target.diagnose()) is not None:
        raise died
    if result.exit_code in (124, 137):  # timeout(1) ended it, the target itself being fine
        raise EnvkitError(
            f"the checks did not finish on {target.name} within {limit:.0f}s",
            "raise --target-timeout, or look for a hung GPU or collective on that host",
        )
    tail = (result.stderr or result.stdout).strip().splitlines()[-5:]
    raise EnvkitError(
        f"the checks did not finish on {target.name} (exit {result.exit_code})",
        "its last output: " + " | ".join(tail),
    )


def run_on_target(
    target: Target,
    settings: VerifySettings,
    python: str | None = None,
    timeout: float | None = None,
    on_started: Callable[[str], None] | None = None,
) -> TargetReport:
    """Ship the bundle, run it with the target's python, bring the report back. Everything
    envkit spends on the target, connection excepted, stays within `timeout` + GRACE_S."""
    started = time.monotonic()
    scale = target.timeout_scale  # above 1 only for an image of another platform, emulated
    settings = replace(settings, timeout_scale=settings.timeout_scale * scale, emulated=scale > 1)
    limit = timeout or SUITE_TIMEOUT_S * settings.timeout_scale
    remote = _remote_dir()
    if on_started is not None:
        on_started(remote)
    user_dir = None
    if settings.user_checks_dir:
        user_dir = _put_user_checks(target, Path(settings.user_checks_dir), f"{remote}/user")
    target.put(build_bundle(), f"{remote}/checks.zip")
    interpreter = _find_python(target, python)
    config = json.dumps(settings.runner_config(target.name, user_dir))
    left = max(1.0, limit - (time.monotonic() - started))
    argv = ["sh", "-c", REMOTE_WRAPPER, REPORT_MARKER, remote, str(int(left))]
    argv += [interpreter, f"{remote}/checks.zip", "run", "--config", config]
    result = target.run(argv, timeout=left + GRACE_S)
    report = entering_report(target.name, _read_report(target, result, limit))
    if target.image_id is not None:  # docker and image targets: what history compares runs by
        report["environment"]["image_id"] = target.image_id
    if target.notes:  # what the transport had to do differently, e.g. no GPUs on this engine
        report["environment"]["target_notes"] = list(target.notes)
    return report


def capture_on_target(
    target: Target, conda_prefix: str | None, python: str | None = None, timeout: float = 600
) -> dict[str, Any]:
    """What is installed on the target, as lock sections (`bundle.zip capture`), through the
    same wrapper as the suite: bounded there, its folder removed, the JSON after the marker."""
    remote = _remote_dir()
    target.put(build_bundle(), f"{remote}/checks.zip")
    interpreter = _find_python(target, python)
    argv = ["sh", "-c", REMOTE_WRAPPER, REPORT_MARKER, remote, str(int(timeout))]
    argv += [interpreter, f"{remote}/checks.zip", "capture"]
    if conda_prefix:
        argv += ["--conda-prefix", conda_prefix]
    captured: dict[str, Any] = _read_report(target, target.run(argv, timeout + GRACE_S), timeout)
    return captured
