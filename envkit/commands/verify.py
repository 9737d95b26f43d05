"""`envkit verify`: choose targets, run the suite on each, write the reports, pick the exit code."""

from __future__ import annotations

import contextlib
import sys
import threading
from dataclasses import replace
from typing import TextIO

from envkit.checks.core.contract import TargetReport
from envkit.checks.core.text import for_terminal
from envkit.cluster.slurm_job import check_settings
from envkit.cluster.slurm_run import verify_on_slurm
from envkit.errors import EXIT_CHECKS_FAILED, EXIT_OK, EnvkitError
from envkit.history.record import Baseline, Remembered, parse_baseline, remember
from envkit.report.emit import emit_reports
from envkit.report.table import print_report
from envkit.services.project import Project, project_or_defaults
from envkit.services.sharing import build_platforms, shared_image
from envkit.targets import TargetUrl, open_target, parse_target, read_targets_file, usage
from envkit.targets.base import Target, TargetOptions
from envkit.targets.image import remove_throwaways
from envkit.verify.combine import combine, exit_code
from envkit.verify.fleet import GRACE_S, verify_many
from envkit.verify.request import VerifyRequest
from envkit.verify.resolve import SUITE_TIMEOUT_S, RunSettings, SlurmSettings, resolve_slurm
from envkit.verify.run import abort_remote, run_on_target

Outcomes = tuple[list[TargetReport], dict[str, str], dict[str, float]]

IMAGE_PREFIX = "image://"  # --image IMAGE is the target image://IMAGE


def _targets(request: VerifyRequest, settings: RunSettings) -> list[TargetUrl]:
    asked = request.targets
    chosen = [parse_target(url) for url in asked.urls]
    if asked.file is not None:
        chosen += read_targets_file(asked.file)
    if asked.local:
        chosen.insert(0, parse_target("local://"))
    if asked.image is not None:
        chosen.append(parse_target(IMAGE_PREFIX + asked.image, "--image"))
    if asked.bundle is not None:  # checked against its manifest in _run, before anything runs
        from envkit.targets.squashfs import available_runtime

        image = (asked.bundle / "rootfs.sqfs").resolve()
        chosen.append(parse_target(f"{available_runtime()}://{image}", "--bundle"))
    if not chosen:
        if not settings.configured:
            raise EnvkitError(
                "nothing to verify: no envkit.yaml here and no target given",
                f"pass --local, --target ({usage()}) or --image IMAGE",
            )
        chosen = [parse_target(f"docker://{name}") for name in settings.containers]
    return chosen


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
    url: TargetUrl, request: VerifyRequest, settings: RunSettings, inflight: _InFlight
) -> TargetReport:
    options = TargetOptions(gpus=settings.gpus, shm_size=settings.shm_size, run_id=request.run_id)
    target = open_target(url, options)
    try:
        return run_on_target(
            target,
            settings.checks(url.transport.in_environment),
            request.targets.python if url.transport.takes_python else None,
            timeout=_limit(request),
            on_started=lambda remote: inflight.started(url.url, target, remote),
        )
    finally:
        inflight.finished(url.url)
        target.close()


def run(request: VerifyRequest) -> int:
    """With --json the combined report is the one thing on stdout: the table and every line for
    people go to stderr."""
    if not request.reports.stdout_json:
        return _run(request, sys.stdout)
    stdout = sys.stdout
    with contextlib.redirect_stdout(sys.stderr):
        return _run(request, stdout)


def _run(request: VerifyRequest, stdout: TextIO) -> int:
    baseline = parse_baseline(request.history.baseline)
    project = project_or_defaults(request.config)
    # Decided (and refused) once, before a bundle's gigabytes are read.
    slurm = _slurm_settings(request, project) if request.slurm is not None else None
    if slurm is not None:
        check_settings(slurm)
    if request.targets.bundle is not None:
        from envkit.bundle.manifest import check_bundle

        check_bundle(request.targets.bundle, project.plan.signing_key, "rootfs.sqfs")
    if project.plan.signing_key and request.targets.image is not None:
        from envkit.services.sharing import require_signed

        require_signed(request.targets.image, project.plan.signing_key)
    settings = project.settings(request.checks)
    if slurm is not None:
        reports, unreachable, seconds = _through_slurm(request, project, settings, slurm)
    else:
        reports, unreachable, seconds = _on_targets(request, settings)
    combined = combine(reports, unreachable, seconds)
    print_report(combined, quiet=request.reports.quiet)
    remembered = _remember(request, reports, baseline)
    emit_reports(
        combined,
        request.reports,
        regressions=remembered.as_json() if remembered else [],
        history=(remembered.changes, remembered.trends) if remembered else None,
        stdout=stdout,
    )
    code = exit_code(combined)
    if remembered and remembered.regressions and code == EXIT_OK and settings.regressions != "warn":
        return EXIT_CHECKS_FAILED  # a figure fell below its baseline: CI must see it
    return code


def _on_targets(request: VerifyRequest, settings: RunSettings) -> Outcomes:
    urls = {url.url: url for url in _targets(request, settings)}
    inflight = _InFlight()
    try:
        outcomes = verify_many(
            list(urls),
            lambda url: _one(urls[url], request, settings, inflight),
            request.targets.parallel,
            deadline=_limit(request) + GRACE_S,
        )
    except KeyboardInterrupt:
        inflight.abort_all()
        raise
    finally:
        if any(url.scheme == "image" for url in urls.values()):
            remove_throwaways(request.run_id)  # one abandoned at its deadline is removed here
    reports = [o.report for o in outcomes if o.report is not None]
    unreachable = {o.target: o.problem or "" for o in outcomes if o.report is None}
    return reports, unreachable, {o.target: o.seconds for o in outcomes}


def _limit(request: VerifyRequest) -> float:
    """One target's time: --target-timeout, else the suite's own limit plus any burn-in."""
    return request.targets.timeout_s or SUITE_TIMEOUT_S + (request.checks.stress_s or 0)


def _pyxis_from_registry(project: Project, image: str | None) -> bool:
    """pyxis with no slurm.image of its own runs the built image: from the team's registry where
    one is set (each node imports it from there), else from the engine's tag."""
    return (
        project.configured
        and project.plan.registry is not None
        and project.plan.slurm.image is None
        and image == project.plan.image.tag
    )


def _enroot_image(project: Project) -> str:
    """The team's image as enroot names it (REGISTRY#PATH:TAG). By its inputs tag, which names
    one set of inputs (enroot's image URIs take a tag, not a digest)."""
    assert project.plan.registry is not None
    platforms = build_platforms(project, None)
    shared = shared_image(project, project.plan.registry, None, platforms=platforms)
    host, _, path = shared.repository.partition("/")
    return f"{host}#{path}:{shared.tag}"


def _slurm_settings(request: VerifyRequest, project: Project) -> SlurmSettings:
    assert request.slurm is not None
    if replace(request.targets, bundle=None).given:
        raise EnvkitError(
            "--slurm runs the suite on the cluster's nodes; it takes no other target",
            "drop --target/--targets/--local/--image, or run them as a separate verify",
        )
    given = request.targets.bundle
    bundle = given.resolve() if given is not None else None
    python = request.targets.python
    return resolve_slurm(project.plan, project.configured, request.slurm, python, bundle)


def _through_slurm(
    request: VerifyRequest, project: Project, settings: RunSettings, slurm: SlurmSettings
) -> Outcomes:
    if slurm.runtime == "pyxis" and _pyxis_from_registry(project, slurm.image):
        slurm = replace(slurm, image=_enroot_image(project))
    checks = settings.checks(in_environment=slurm.runtime != "python")
    reports, unreachable = verify_on_slurm(
        project.plan.project, slurm, checks, request.run_id, request.reports.quiet
    )
    return reports, unreachable, {}


def _remember(
    request: VerifyRequest, reports: list[TargetReport], baseline: Baseline
) -> Remembered | None:
    """Record the runs and judge them against their baselines; say what was found."""
    if not request.history.record:
        return None
    summarise = request.reports.html is not None
    remembered = remember(
        reports, request.run_id, request.history.file, baseline, summarise=summarise
    )
    if remembered.warning:
        sys.stderr.write(for_terminal(f"warning: {remembered.warning}\n"))
    for target, found in remembered.regressions.items():
        for regression in found:
            sys.stdout.write(for_terminal(f"regression on {target}: {regression.describe()}\n"))
    if remembered.run_ids and not request.reports.quiet:
        ids = ", ".join(f"{t}: run {i}" for t, i in remembered.run_ids.items())
        sys.stdout.write(for_terminal(f"recorded in history ({ids})\n"))
    return remembered
