"""The checks package as one zip that any python with torch runs: `python bundle.zip run ...`."""

from __future__ import annotations

import functools
import io
import zipfile
from pathlib import Path

CHECKS_DIR = Path(__file__).parent.parent / "checks"
BUNDLE_PACKAGE = "envkit_checks"
MAIN = "import sys\nfrom envkit_checks.main import main\nsys.exit(main())\n"


@functools.cache  # the same bytes for every target of one run
def build_bundle() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for source in sorted([*CHECKS_DIR.rglob("*.py"), *CHECKS_DIR.rglob("*.json")]):
            name = source.relative_to(CHECKS_DIR).as_posix()
            # Fixed timestamps keep the bundle byte-identical between runs.
            info = zipfile.ZipInfo(f"{BUNDLE_PACKAGE}/{name}", date_time=(2020, 1, 1, 0, 0, 0))
            archive.writestr(info, source.read_text(encoding="utf-8"))
        archive.writestr(zipfile.ZipInfo("__main__.py", date_time=(2020, 1, 1, 0, 0, 0)), MAIN)
    return buffer.getvalue()
