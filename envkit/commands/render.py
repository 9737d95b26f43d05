"""`envkit render`: write the build context and the project's editor configs from envkit.yaml,
or with --check say whether what is on disk is out of date."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from envkit.errors import EXIT_CHECKS_FAILED, EXIT_OK
from envkit.render.outputs import Outputs, drift, render_outputs, write_outputs
from envkit.services.project import load_project


@dataclass(frozen=True, kw_only=True)
class RenderRequest:
    config: str | None = None
    out: Path | None = None  # the build context's folder (default .envkit beside the config)
    check: bool = False  # write nothing; exit 1 where the files on disk differ
    force: bool = False  # replace files of envkit's names that envkit did not write


def run(request: RenderRequest) -> int:
    project = load_project(request.config, request.out)
    outputs = render_outputs(project.plan, project.context_dir, project.project_dir)
    for note in project.plan.notes:
        sys.stderr.write(f"note: {note}\n")
    return _check(outputs) if request.check else _write(outputs, request.force)


def _check(outputs: Outputs) -> int:
    found = drift(outputs)
    for label, paths in (
        ("differs", found.differs),
        ("stale", found.stale),
        ("stray", found.stray),
    ):
        for path in paths:
            sys.stdout.write(f"{label + ':':<8} {path}\n")
    if found:
        sys.stderr.write(
            "rendered files are out of date: run `envkit render`"
            + (" and remove the stray files (envkit did not write them)" if found.stray else "")
            + "\n"
        )
        return EXIT_CHECKS_FAILED
    sys.stdout.write(f"{outputs.context_dir}: up to date ({len(outputs.context)} files)\n")
    return EXIT_OK


def _write(outputs: Outputs, force: bool) -> int:
    context, beside = write_outputs(outputs, force)
    for result in (context, beside):
        for rel in result.changed:
            sys.stdout.write(f"wrote   {result.out_dir / rel}\n")
        for rel in result.removed:
            sys.stdout.write(f"removed {result.out_dir / rel}\n")
    for rel in context.stray:
        sys.stderr.write(
            f"warning: {context.out_dir / rel} was not written by envkit; the build copies its "
            "folder whole, so remove it unless you mean it to be there\n"
        )
    for rel in beside.foreign:
        sys.stderr.write(
            f"note: left {beside.out_dir / rel} as it is: it was not written by envkit "
            "(remove it to have envkit write one)\n"
        )
    sys.stdout.write(
        f"{context.out_dir}: {len(context.changed)} changed, {len(context.unchanged)} unchanged\n"
    )
    return EXIT_OK
