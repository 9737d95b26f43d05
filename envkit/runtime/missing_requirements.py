"""The requirements (arguments) whose project the environment does not have, by name, one per
line: the build-backend layer installs only these, so it adds tools and never moves what the
layers before it installed. Standard library only."""

import re
import sys
from importlib import metadata
from typing import List


def _key(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def missing(requirements: List[str]) -> List[str]:
    have = {_key(d.metadata["Name"] or "") for d in metadata.distributions()}
    return [
        r for r in requirements if _key(re.split(r"[ ;<>=!~\[(@]", r, maxsplit=1)[0]) not in have
    ]


if __name__ == "__main__":
    print("\n".join(missing(sys.argv[1:])))
