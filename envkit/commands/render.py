"""`envkit render`: write the build context (and the project's editor configs) from envkit.yaml,
or with --check say whether what is on disk is out of date."""

from __future__ import annotations

import sys
from pathlib import Path

from envkit.errors import EXIT_CHECKS_FAILED, EXIT_OK


def render(config: str | None, out: Path | None, check: bool) -> int:
    from envkit.config.load import load_spec
    from envkit.plan import make_plan
    from envkit.render import diff_files, render_files, write_files

    loaded = load_spec(config)
    plan = make_plan(loaded)
    files = render_files(plan)
    out_dir = out if out is not None else loaded.path.parent / ".envkit"
    for note in plan.notes:
        sys.stderr.write(f"note: {note}\n")
    if check:
        changed, _, stale = diff_files(files, out_dir)
        for rel in changed:
            sys.stdout.write(f"differs: {out_dir / rel}\n")
        for rel in stale:
            sys.stdout.write(f"stale:   {out_dir / rel}\n")
        if changed or stale:
            sys.stderr.write("rendered files are out of date: run `envkit render`\n")
            return EXIT_CHECKS_FAILED
        sys.stdout.write(f"{out_dir}: up to date ({len(files)} files)\n")
        return EXIT_OK
    result = write_files(files, out_dir)
    for rel in result.changed:
        sys.stdout.write(f"wrote   {out_dir / rel}\n")
    for rel in result.removed:
        sys.stdout.write(f"removed {out_dir / rel}\n")
    sys.stdout.write(
        f"{out_dir}: {len(result.changed)} changed, {len(result.unchanged)} unchanged\n"
    )
    return EXIT_OK
