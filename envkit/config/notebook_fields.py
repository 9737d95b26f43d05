"""Field types of the `notebook:` section: pinned releases, a kernel's name, a log folder under
the login home (no `..` segment: it must stay inside)."""

from __future__ import annotations

from typing import Annotated

from envkit.config.fields import matching

PipVersion = Annotated[
    str,
    matching(
        r"[0-9]+(?:\.[0-9]+){0,3}(?:(?:a|b|rc)[0-9]+)?",
        "release number",
        "pin an exact release, e.g. '4.3.4'",
    ),
]
KernelName = Annotated[
    str,
    matching(
        r"[a-z0-9][a-z0-9_.-]{0,63}",
        "kernel name",
        "use lowercase letters, digits, '.', '-' and '_' (Jupyter's kernelspec names), e.g. 'lab'",
    ),
]
LogDir = Annotated[
    str,
    matching(
        r"(?!\.\.?(?:/|$))[A-Za-z0-9_.+-]+(?:/(?!\.\.?(?:/|$))[A-Za-z0-9_.+-]+)*",
        "log folder",
        "give a folder relative to the login home, e.g. runs or experiments/tb",
    ),
]
