"""envkit's e2e Poetry project: imported from the workspace, beside the base's torch."""

import torch  # noqa: F401 - the environment's torch still imports beside the lock's packages

SAYS = "poetryproj from the workspace"
