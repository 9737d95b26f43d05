"""The closed sets of choices in envkit.yaml, named once: the model validates against them and
the plan, the commands and the cluster code are typed with them (no `str  # a | b` comments)."""

from __future__ import annotations

from typing import Literal, get_args

Flavor = Literal["pytorch", "cuda", "custom"]
FLAVORS: tuple[str, ...] = get_args(Flavor)
Variant = Literal["runtime", "devel"]
CudnnMajor = Literal["8", "9"]
UbuntuRelease = Literal["18.04", "20.04", "22.04", "24.04"]
TorchSource = Literal["auto", "pypi", "pytorch-index"]
AptSecurity = Literal["official", "mirror"]
Kex = Literal["post-quantum", "compatible"]
RestartPolicy = Literal["no", "always", "on-failure", "unless-stopped"]
BuildNetwork = Literal["default", "host"]
TeamMode = Literal["shared", "per-member"]
Regressions = Literal["fail", "warn"]
SlurmRuntime = Literal["python", "pyxis", "apptainer", "charliecloud"]
Installer = Literal["uv", "pip"]
Builder = Literal["auto", "buildkit", "classic"]
PcieWidth = Literal[1, 2, 4, 8, 16, 32]
Persistence = Literal["any", "required"]
# envkit/platforms.py holds each one's other names (arm64, aarch64) and its GPU nodes.
PlatformName = Literal["linux/amd64", "linux/arm64"]
