"""packages.pip entries with options of their own, as the Dockerfile lays them out: each in a
layer after the project's other Python packages (a CUDA extension built without isolation needs
torch and the build tools already there), and the netrc secret the layers that ask a private
index mount (BuildKit only: it is never part of a layer, and the classic builder has none)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from envkit.plan.image.install import Mount

NETRC_SECRET = "envkit-netrc"  # noqa: S105 - the secret's name, not its value
NETRC_ENV = "ENVKIT_NETRC"


# required=false (the default, said): a build without credentials still asks the index, which
# then answers 401 and the failing step says so.
NETRC = Mount(NETRC_SECRET, "/root/.netrc", "secret", "mode=0400,required=false")


@dataclass(frozen=True)
class OwnPip:
    requirement: str
    no_build_isolation: bool
    index: str | None
    find_links: str | None = None


def netrc_file() -> Path | None:
    """The building machine's netrc: $ENVKIT_NETRC, else ~/.netrc; None where there is none."""
    named = os.environ.get(NETRC_ENV)
    path = Path(named).expanduser() if named else Path.home() / ".netrc"
    return path if path.is_file() else None
