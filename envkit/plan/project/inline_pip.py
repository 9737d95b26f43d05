"""torchvision and torchaudio named in envkit.yaml's own packages.pip are torch's companions as
they are in the project's files: a line that admits the release built for envkit's torch is
installed in the torch layer, from torch's index, at that release (a PyPI build beside a torch
from the PyTorch index would be another CUDA build); one that does not is refused at its line."""

from __future__ import annotations

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from envkit.catalog.compat import COMPANIONS
from envkit.config.load import LoadedSpec
from envkit.errors import ConfigError
from envkit.plan.project.torch_lines import TorchContext, judge_pip


def inline_companions(
    loaded: LoadedSpec, context: TorchContext
) -> tuple[tuple[str, ...], frozenset[int]]:
    """(the companions packages.pip asks for, pinned as the torch layer installs them; the
    indexes of the entries they come from, which leave the pip layer). Every refusal at once."""
    companions: list[str] = []
    moved: set[int] = set()
    issues = []
    for index, entry in enumerate(loaded.spec.packages.pip):
        if not isinstance(entry, str):
            continue  # an entry with options keeps its own layer and index
        try:
            requirement = Requirement(entry)
        except InvalidRequirement:
            continue  # the config's own validation judged the line
        if canonicalize_name(requirement.name) not in COMPANIONS:
            continue
        verdict = judge_pip(requirement, context)
        if verdict.action == "refuse":
            issues.append(loaded.issue(("packages", "pip", index), verdict.why, verdict.fix, entry))
        elif verdict.companion:
            companions.append(verdict.companion)
            moved.add(index)
    if issues:
        raise ConfigError(str(loaded.path), issues)
    return tuple(companions), frozenset(moved)
