"""Requirement lines from stdin to stdout without the entries of the packages named as
arguments, their continuation lines (the --hash ones) with them: what `poetry export` or `pdm
export` wrote of a lock, without torch and what only torch needs, which envkit's torch layer
installs as torch's own build has them. Standard library only."""

import re
import sys

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def _key(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


if __name__ == "__main__":
    dropped = {_key(name) for name in sys.argv[1:]}
    skipping = False
    for line in sys.stdin:
        if not line[:1].isspace():  # an entry's first line (or a comment, or an option)
            found = NAME.match(line)
            skipping = found is not None and _key(found.group(0)) in dropped
        if not skipping:
            sys.stdout.write(line)
