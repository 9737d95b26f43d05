"""A uv workspace member: imported from the workspace, with its sibling b and the base's torch."""

import b  # noqa: F401 - the sibling member, installed editable beside it
import torch  # noqa: F401 - the environment's torch still imports beside the lock's packages
