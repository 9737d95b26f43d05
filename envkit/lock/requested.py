"""What envkit.yaml asks the image to hold, as the lock's [requested] section: the lock is only
good for the config it was made from. A package added to envkit.yaml since the lock, another
base or torch, is named, with the fix (`envkit lock` again after a build)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

from envkit.checks.programs.lockfile import Entries, format_lock
from envkit.errors import EnvkitError
from envkit.lock.validate import REQUESTED_KINDS
from envkit.plan import Plan

# The image label that says which requests an image was built for: `envkit lock` refuses an
# image built from another config (its lock would not describe this config).
INPUTS_LABEL = "io.envkit.inputs"


def _token(value: str) -> str:
    return re.sub(r"\s+", "", value)  # requirement strings mean the same without blanks


def _digest(texts: Iterable[str]) -> str:
    return hashlib.sha256("\0".join(texts).encode()).hexdigest()[:16]


def requested(plan: Plan) -> Entries:
    """One entry per request, `kind:value`, each standing alone on its line for diffs."""
    items = [f"base:{plan.image.base}", f"python:{plan.python.provider}"]
    if plan.torch.version:
        items.append(f"torch:{plan.torch.requirement}+{plan.torch.cuda or '-'}")
    items += [f"apt:{package}" for package in plan.packages.apt]
    items += [f"pip:{_token(requirement)}" for requirement in plan.packages.pip]
    items += [f"pip:{_token(package.requirement)}" for package in plan.packages.pip_own]
    # The project's own files by content: a line changed in one is another request.
    for layer in plan.packages.requirements:
        items.append(f"requirements:{layer.top}@{_digest(f.text for f in layer.files)}")
    project = plan.packages.project
    if project is not None:
        files = [project.pyproject] + ([project.lock] if project.lock else [])
        chosen = [*(f"extra:{e}" for e in project.extras), *(f"group:{g}" for g in project.groups)]
        texts = [f.text for f in files] + chosen  # another extra or group is another request
        items.append(f"project:{project.pyproject.path}@{_digest(texts)}")
    if plan.notebook.enabled:  # JupyterLab comes from the lock too
        items += [f"notebook:{requirement}" for requirement in plan.notebook.requirements]
    if plan.conda.update_env:
        items += [f"conda:{_token(dependency)}" for dependency in plan.conda.dependencies]
        items += [f"conda-pip:{_token(requirement)}" for requirement in plan.conda.pip]
    unknown = [item for item in items if item.partition(":")[0] not in REQUESTED_KINDS]
    assert not unknown, f"[requested] kinds the lock's reader refuses: {unknown}"
    return {item: () for item in items}


def inputs_digest(plan: Plan) -> str:
    return hashlib.sha256(format_lock({"requested": requested(plan)}).encode()).hexdigest()


def check_matches(lock_requests: Entries, plan: Plan, lock_path: str) -> None:
    """Raise naming every request the lock and envkit.yaml disagree on."""
    wanted = requested(plan)
    added = sorted(set(wanted) - set(lock_requests))
    dropped = sorted(set(lock_requests) - set(wanted))
    if not added and not dropped:
        return
    parts = [f"envkit.yaml asks for {', '.join(added)}"] if added else []
    parts += [f"no longer asks for {', '.join(dropped)}"] if dropped else []
    raise EnvkitError(
        f"{lock_path} was made for another envkit.yaml: since the lock, it " + " and ".join(parts),
        "run `envkit build` then `envkit lock` to lock the new config (or undo the change)",
    )
