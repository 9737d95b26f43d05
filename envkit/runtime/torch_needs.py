"""What the environment's torch was built against, as pip constraint lines, one per line: torch
(or the arguments: the torch and companions envkit installed), the nvidia-* CUDA libraries and
triton it requires at their installed versions, and numpy's major where numpy is there (an apt
or conda torch is built for that major). Nothing where there is no torch.

Run with the environment's own Python by the Dockerfile's torch layer (which writes the
constraints every later install keeps), before a conda environment's pip section, and by
envkit-conda. Standard library only (Python 3.8+: importlib.metadata)."""

import re
import sys
from importlib import metadata
from typing import List


def _key(name: str) -> str:
    return name.lower().replace("_", "-")


def needs(asked: List[str]) -> List[str]:
    installed = {_key(d.metadata["Name"] or ""): d.version for d in metadata.distributions()}
    if "torch" not in installed:
        return []
    requires = [
        r
        for d in metadata.distributions()
        if (d.metadata["Name"] or "").lower() == "torch"
        for r in (d.requires or [])
        if "extra ==" not in r
    ]
    names = [_key(re.split(r"[ ;<>=!~\[(]", r, maxsplit=1)[0]) for r in requires]
    lines = list(asked) or ["torch==" + installed["torch"]]
    lines += sorted(
        {
            name + "==" + installed[name]
            for name in names
            if name in installed and (name.startswith("nvidia-") or "triton" in name)
        }
    )
    if "numpy" in installed:
        major = int(installed["numpy"].split(".")[0])
        lines.append("numpy>=%d,<%d" % (major, major + 1))
    return lines


if __name__ == "__main__":
    print("\n".join(needs(sys.argv[1:])))
