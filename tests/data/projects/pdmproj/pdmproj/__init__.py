"""envkit's e2e PDM project: imported from the workspace, beside the base's torch."""

import torch  # noqa: F401 - the environment's torch still imports beside the lock's packages

SAYS = "pdmproj from the workspace"
