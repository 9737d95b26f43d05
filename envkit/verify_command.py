"""`envkit verify`: choose targets, run the suite on each, write the reports, pick the exit code."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envkit.errors import EnvkitError
from envkit.fleet import DEFAULT_PARALLEL, check_url, read_targets_file, verify_many
from envkit.verify import VerifySettings, combine, exit_code, run_on_target, settings_for


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


def _plan_if_any(request: VerifyRequest) -> Any | None:
    from envkit.config.load import CONFIG_ENV, DEFAULT_NAME, load_spec
    from envkit.plan import make_plan

    if request.config or os.environ.get(CONFIG_ENV) or Path(DEFAULT_NAME).is_file():
        return make_plan(load_spec(request.config))
    return None


def _targets(request: VerifyRequest, plan: Any | None) -> list[str]:
    chosen = list(request.targets)
    for url in chosen:
        check_url(url)
    if request.targets_file is not None:
        chosen += read_targets_file(request.targets_file)
    if request.local:
        chosen.insert(0, "local://")
    if not chosen and request.image is None:
        if plan is None:
            raise EnvkitError(
                "nothing to verify: no envkit.yaml here and no target given",
                "pass --local, --target docker://NAME, --target ssh://USER@HOST:PORT "
                "or --image IMAGE",
            )
        chosen = [f"docker://{service.container_name}" for service in plan.services]
    return chosen


def _settings(request: VerifyRequest, plan: Any | None, in_container: bool) -> VerifySettings:
    return settings_for(
        plan,
        in_container=in_container,
        require_gpu=request.require_gpu,
        expected_gpus=request.expected_gpus,
        bench=request.bench,
        only=request.only,
        skip=request.skip,
    )


def _one(url: str, request: VerifyRequest, plan: Any | None) -> dict[str, Any]:
    from envkit.targets import open_target

    target = open_target(url)
    try:
        python = request.python if url.startswith("local://") else None
        settings = _settings(request, plan, not url.startswith("local"))
        return run_on_target(target, settings, python, timeout=request.target_timeout)
    finally:
        target.close()


def _image(request: VerifyRequest, plan: Any | None) -> dict[str, Any]:
    from envkit.targets.image import throwaway_container

    gpus = bool(plan and plan.gpus != "none")
    shm = plan.shm_size if plan else None
    assert request.image is not None
    with throwaway_container(request.image, gpus=gpus, shm_size=shm) as target:
        return run_on_target(target, _settings(request, plan, in_container=True))


def run_verify(request: VerifyRequest) -> int:
    from envkit.report.junit import to_junit
    from envkit.report.table import print_report

    plan = _plan_if_any(request)
    urls = _targets(request, plan)
    outcomes = verify_many(urls, lambda url: _one(url, request, plan), request.parallel)
    reports = [o.report for o in outcomes if o.report is not None]
    unreachable = {o.target: o.problem or "" for o in outcomes if o.report is None}
    seconds = {o.target: o.seconds for o in outcomes}
    if request.image:
        reports.append(_image(request, plan))
    combined = combine(reports, unreachable, seconds)
    print_report(combined, quiet=request.quiet)
    if request.json_out:
        request.json_out.write_text(json.dumps(combined, indent=2) + "\n")
    if request.junit_out:
        request.junit_out.write_text(to_junit(combined))
    if request.html_out:
        from envkit.report.html import to_html

        request.html_out.write_text(to_html(combined), encoding="utf-8")
    return exit_code(combined)
