"""The reports a run writes (--json-file, --junit, --html, and --json's report on stdout): one
emitter for `envkit verify` and the cluster merges (`k8s merge`), so every writer gets the same
report and the same encoding."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from envkit.checks.core.text import finite

if TYPE_CHECKING:
    from envkit.report.html import History
    from envkit.verify.combine import CombinedReport
    from envkit.verify.request import ReportsRequest


def emit_reports(
    combined: CombinedReport,
    outputs: ReportsRequest,
    *,
    regressions: list[dict[str, Any]] | None = None,
    history: History | None = None,
    stdout: TextIO | None = None,
) -> None:
    """Write the files asked for. `regressions` (verify's baseline findings) joins the JSON when
    given; `history` (changes and trends) joins the HTML page."""
    if outputs.json_file is not None or outputs.stdout_json:
        document: dict[str, Any] = dict(combined)
        if regressions is not None:
            document["regressions"] = regressions
        # NaN and infinities (a check's figure) are not JSON: they are written as null.
        text = json.dumps(finite(document), indent=2) + "\n"
        if outputs.json_file is not None:
            _write(outputs.json_file, text)
        if outputs.stdout_json:
            out = stdout or sys.stdout
            out.write(text)
            out.flush()
    if outputs.junit is not None:
        from envkit.report.junit import to_junit

        _write(outputs.junit, to_junit(combined))
    if outputs.html is not None:
        from envkit.report.html import to_html

        _write(outputs.html, to_html(combined, history))


def _write(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        from envkit.errors import EnvkitError

        raise EnvkitError(
            f"cannot write the report {path}: {exc.strerror or exc}",
            "name a file in a folder this user may write",
        ) from None
