"""The torch layer's check: the installed torch is the release and CUDA build envkit asked for
(arguments: VERSION CUDA, CUDA "cpu" for a CPU build); else it exits naming both. Run with the
image's Python right after torch is installed, so a wrong wheel fails the build, not a member's
first import."""

import platform
import sys

import torch


def problem(version: str, cuda: str) -> str:
    got = torch.version.cuda or "cpu"
    same = torch.__version__.split("+")[0] == version
    if same and (got == cuda or got.startswith(cuda + ".")):
        return ""
    why = ""
    if got == "cpu" != cuda and platform.machine() == "aarch64":
        why = " (PyPI's aarch64 torch is a CPU build; CUDA ones are on the PyTorch index)"
    return "torch %s (CUDA %s) is installed, not torch %s (CUDA %s)%s" % (
        torch.__version__,
        got,
        version,
        cuda,
        why,
    )


if __name__ == "__main__":
    sys.exit(problem(sys.argv[1], sys.argv[2]) or 0)
