"""`envkit verify`: choose targets, run the suite on each, write the reports, pick the exit code."""

from __future__ import annotations

import json
import secrets
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from envkit.commands.project import plan_if_given
from envkit.errors import EXIT_CHECKS_FAILED, EXIT_OK, EnvkitError
from envkit.verify.combine import combine, exit_code
from envkit.verify.fleet import DEFAULT_PARALLEL, GRACE_S, verify_many
from envkit.verify.run import (
    SUITE_TIMEOUT_S,
    VerifySettings,
    abort_remote,
    run_on_target,
    settings_for,
)

if TYPE_CHECKING:
    from envkit.checks.contract import TargetReport
    from envkit.cluster.slurm_job import SlurmRequest
    from envkit.history.record import Baseline, Remembered
    from envkit.plan import Plan
    from envkit.targets import Target, TargetUrl


@dataclass(frozen=True)
class VerifyRequest:
    config: str | None
    local: bool
    targets: tuple[str, ...]
    image: str | None
    python: str | None
    only: tuple[str, ...]
    skip: tuple[str, ...]
    bench: bool
    require_gpu: bool | None
    expected_gpus: int | None
    json_out: Path | None
    junit_out: Path | None
    quiet: bool
    targets_file: Path | None = None
    parallel: int = DEFAULT_PARALLEL
    target_timeout: float | None = None
    html_out: Path | None = None
    record: bool = True  # keep the run in history (envkit history)
    history_file: Path | None = None
    baseline: str | None = None  # auto | a run id: flag figures worse than it
    # Labels the throwaway container of --image, so one abandoned at its deadline is found.
    run_id: str = field(default_factory=lambda: secrets.token_hex(6))
    slurm: SlurmRequest | None = None  # verify --slurm: one batch job instead of targets


def _targets(request: VerifyRequest, plan: Plan | None) -> list[TargetUrl]:
    from envkit.targets import parse_target, read_targets_file, usage

    chosen = [parse_target(url) for url in request.targets]
    if request.targets_file is not None:
        chosen += read_targets_file(request.targets_file)
    if request.local:
        chosen.insert(0, parse_target("local://"))
    if request.image is not None:
        chosen.append(parse_target(IMAGE_PREFIX + request.image, "--image"))
    if not chosen:
        if plan is None:
            raise EnvkitError(
                "nothing to verify: no envkit.yaml here and no target given",
                f"pass --local, --target ({usage()}) or --image IMAGE",
            )
        chosen = [parse_target(f"docker://{s.container_name}") for s in plan.services]
    return chosen


def _settings(request: VerifyRequest, plan: Plan | None, in_container: bool) -> VerifySettings:
    return settings_for(
        plan,
        in_container=in_container,
        require_gpu=request.require_gpu,
        expected_gpus=request.expected_gpus,
        bench=request.bench,
        only=request.only,
        skip=request.skip,
    )


IMAGE_PREFIX = "image://"  # --image IMAGE is the target image://IMAGE


class _InFlight:
    """Targets whose suite is running, so Ctrl-C can end it there and remove its files."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.runs: dict[str, tuple[Target, str]] = {}

    def started(self, url: str, target: Target, remote_dir: str) -> None:
        with self.lock:
            self.runs[url] = (target, remote_dir)

    def finished(self, url: str) -> None:
        with self.lock:
            self.runs.pop(url, None)

    def abort_all(self, wait: float = 5.0) -> None:
        with self.lock:
            runs = list(self.runs.values())
        threads = [threading.Thread(target=abort_remote, args=run, daemon=True) for run in runs]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(wait)


def _one(
    url: TargetUrl, request: VerifyRequest, plan: Plan | None, inflight: _InFlight
) -> TargetReport:
    from envkit.targets import TargetOptions, open_target

    options = TargetOptions(
        gpus=bool(plan and plan.runtime.gpus != "none"),
        shm_size=plan.runtime.shm_size if plan else None,
        run_id=request.run_id,
    )
    target = open_target(url, options)
    try:
        return run_on_target(
            target,
            _settings(request, plan, url.transport.in_environment),
            request.python if url.transport.takes_python else None,
            timeout=request.target_timeout,
            on_started=lambda remote: inflight.started(url.url, target, remote),
        )
    finally:
        inflight.finished(url.url)
        target.close()


def run_verify(request: VerifyRequest) -> int:
    from envkit.history.record import parse_baseline
    from envkit.report.junit import to_junit
    from envkit.report.table import print_report

    baseline = parse_baseline(request.baseline)
    plan = plan_if_given(request.config)
    if request.slurm is not None:
        reports, unreachable, seconds = _through_slurm(request, request.slurm, plan)
    else:
        reports, unreachable, seconds = _on_targets(request, plan)
    combined = combine(reports, unreachable, seconds)
    print_report(combined, quiet=request.quiet)
    remembered = _remember(request, reports, baseline)
    if request.json_out:
        document = {**combined, "regressions": remembered.as_json() if remembered else []}
        request.json_out.write_text(json.dumps(document, indent=2) + "\n")
    if request.junit_out:
        request.junit_out.write_text(to_junit(combined))
    if request.html_out:
        from envkit.report.html import to_html

        history = (remembered.changes, remembered.trends) if remembered else None
        request.html_out.write_text(to_html(combined, history), encoding="utf-8")
    code = exit_code(combined)
    warn_only = plan is not None and plan.verify.regressions == "warn"
    if remembered and remembered.regressions and code == EXIT_OK and not warn_only:
        return EXIT_CHECKS_FAILED  # a figure fell below its baseline: CI must see it
    return code


def _on_targets(
    request: VerifyRequest, plan: Plan | None
) -> tuple[list[TargetReport], dict[str, str], dict[str, float]]:
    urls = {url.url: url for url in _targets(request, plan)}
    inflight = _InFlight()
    limit = request.target_timeout or SUITE_TIMEOUT_S
    try:
        outcomes = verify_many(
            list(urls),
            lambda url: _one(urls[url], request, plan, inflight),
            request.parallel,
            deadline=limit + GRACE_S,
        )
    except KeyboardInterrupt:
        inflight.abort_all()
        raise
    finally:
        if any(url.scheme == "image" for url in urls.values()):
            from envkit.targets.image import remove_throwaways

            remove_throwaways(request.run_id)  # one abandoned at its deadline is removed here
    reports = [o.report for o in outcomes if o.report is not None]
    unreachable = {o.target: o.problem or "" for o in outcomes if o.report is None}
    return reports, unreachable, {o.target: o.seconds for o in outcomes}


def _through_slurm(
    request: VerifyRequest, slurm: SlurmRequest, plan: Plan | None
) -> tuple[list[TargetReport], dict[str, str], dict[str, float]]:
    from envkit.cluster.slurm_run import verify_on_slurm

    if request.targets or request.targets_file or request.local or request.image:
        raise EnvkitError(
            "--slurm runs the suite on the cluster's nodes; it takes no other target",
            "drop --target/--targets/--local/--image, or run them as a separate verify",
        )
    runtime = slurm.runtime or (plan.slurm.runtime if plan and plan.slurm else "python")
    settings = _settings(request, plan, in_container=runtime != "python")
    if request.python:
        slurm = replace(slurm, python=request.python)
    reports, unreachable = verify_on_slurm(plan, slurm, settings, request.run_id, request.quiet)
    return reports, unreachable, {}


def _remember(
    request: VerifyRequest, reports: list[TargetReport], baseline: Baseline
) -> Remembered | None:
    """Record the runs and judge them against their baselines; say what was found."""
    import sys

    from envkit.history.record import remember

    if not request.record:
        return None
    remembered = remember(
        reports,
        request.run_id,
        request.history_file,
        baseline,
        summarise=request.html_out is not None,
    )
    if remembered.warning:
        sys.stderr.write(f"warning: {remembered.warning}\n")
    for target, found in remembered.regressions.items():
        for regression in found:
            sys.stdout.write(f"regression on {target}: {regression.describe()}\n")
    if remembered.run_ids and not request.quiet:
        ids = ", ".join(f"{t}: run {i}" for t, i in remembered.run_ids.items())
        sys.stdout.write(f"recorded in history ({ids})\n")
    return remembered
