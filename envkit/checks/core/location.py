"""Where the checks package lives and under which name, so a process can start another on the
same code: a folder of envkit's source (`envkit.checks`) or a bundle zip (`envkit_checks`)."""

from __future__ import annotations

import os
import pkgutil

# This module is <top>.core.location; the top package is envkit.checks or envkit_checks.
PACKAGE = (__package__ or "envkit.checks.core").rsplit(".", 1)[0]
# ROOT is what goes on sys.path for `import PACKAGE`: from this file, up through core/, the
# package's own folders, to the folder (or zip) that holds the top one.
ROOT = os.path.abspath(__file__)
for _ in range(PACKAGE.count(".") + 3):
    ROOT = os.path.dirname(ROOT)


def python_code(call: str) -> str:
    """A `python -c` program that imports this package from ROOT and runs `call`, e.g.
    'main.main()' or 'core.worker.worker_main(5)'."""
    module, _, function = call.rpartition(".")
    return (
        f"import sys; sys.path.insert(0, {ROOT!r}); "
        f"from {PACKAGE}.{module} import {function.split('(')[0]}; "
        f"sys.exit({function})"
    )


def program_text(name: str) -> str:
    """programs/<name>.py's source, from the folder or the zip, for another interpreter's `-c`."""
    data = pkgutil.get_data(f"{PACKAGE}.programs", f"{name}.py")
    if data is None:
        raise OSError(f"programs/{name}.py cannot be read from {ROOT}")
    return data.decode("utf-8")
