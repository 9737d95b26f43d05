"""`envkit render`: write the build context and the project's editor configs from envkit.yaml,
or with --check say whether what is on disk is out of date."""

from __future__ import annotations

import sys
from pathlib import Path

from envkit.commands.project import load_project
from envkit.errors import EXIT_CHECKS_FAILED, EXIT_OK


def render(config: str | None, out: Path | None, check: bool) -> int:
    from envkit.render import drift, render_outputs, write_outputs

    project = load_project(config, out)
    plan, out_dir, project_dir = project.plan, project.context_dir, project.project_dir
    outputs = render_outputs(plan, out_dir, project_dir)
    for note in plan.notes:
        sys.stderr.write(f"note: {note}\n")
    if check:
        found = drift(outputs)
        for path in found.differs:
            sys.stdout.write(f"differs: {path}\n")
        for path in found.stale:
            sys.stdout.write(f"stale:   {path}\n")
        if found:
            sys.stderr.write("rendered files are out of date: run `envkit render`\n")
            return EXIT_CHECKS_FAILED
        sys.stdout.write(f"{out_dir}: up to date ({len(outputs.context)} files)\n")
        return EXIT_OK
    context, beside = write_outputs(outputs)
    for result in (context, beside):
        for rel in result.changed:
            sys.stdout.write(f"wrote   {result.out_dir / rel}\n")
        for rel in result.removed:
            sys.stdout.write(f"removed {result.out_dir / rel}\n")
    for rel in beside.foreign:
        sys.stderr.write(
            f"note: left {project_dir / rel} as it is: it was not written by envkit "
            "(remove it to have envkit write one)\n"
        )
    sys.stdout.write(
        f"{out_dir}: {len(context.changed)} changed, {len(context.unchanged)} unchanged\n"
    )
    return EXIT_OK
