"""envkit's e2e pip-tools project: imported from the workspace, beside the base's torch."""

import torch  # noqa: F401 - the environment's torch still imports beside the pinned packages

SAYS = "piptoolsproj from the workspace"
