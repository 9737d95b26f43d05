"""torch and its companions named in envkit.yaml's own packages.pip follow the rules they follow
in the project's files (one rule everywhere: a README's `pip install torch numpy` copied into
packages.pip means what the same line in requirements.txt means). A torch line that admits
envkit's torch leaves the pip layer (the torch layer installs it, its CUDA build checked); a
companion that admits the release built for envkit's torch is installed in the torch layer,
from torch's index, at that release (a PyPI build beside a torch from the PyTorch index would
be another CUDA build); a line that does not admit them is refused at its line."""

from __future__ import annotations

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from envkit.config.load import LoadedSpec
from envkit.config.rules import requirement_name
from envkit.errors import ConfigError
from envkit.plan.project.torch_lines import TORCHES, TorchContext, judge_pip


def inline_companions(
    loaded: LoadedSpec, context: TorchContext
) -> tuple[tuple[str, ...], frozenset[int], tuple[str, ...]]:
    """(the companions packages.pip asks for, pinned as the torch layer installs them; the
    indexes of the entries they come from, which leave the pip layer; what render says of
    them, as of a file's lines). Every refusal at once."""
    companions: list[str] = []
    moved: set[int] = set()
    notes: list[str] = []
    issues = []
    for index, entry in enumerate(loaded.spec.packages.pip):
        if not isinstance(entry, str):  # an entry with options keeps its own layer and index
            if requirement_name(entry.name) in TORCHES:
                problem = f"{entry.name} with options of its own would replace torch's layer"
                fix = "list it as a plain string: envkit installs and checks torch's build"
                issues.append(loaded.issue(("packages", "pip", index), problem, fix, entry))
            continue
        try:
            requirement = Requirement(entry)
        except InvalidRequirement:
            continue  # the config's own validation judged the line
        verdict = judge_pip(requirement, context)
        if canonicalize_name(requirement.name) not in TORCHES:
            notes += [f"envkit.yaml: packages.pip[{index}]: {verdict.why}"] if verdict.said else []
            continue
        if verdict.action == "refuse":
            issues.append(loaded.issue(("packages", "pip", index), verdict.why, verdict.fix, entry))
        elif verdict.action == "drop":
            companions += [verdict.companion] if verdict.companion else []
            notes += [f"envkit.yaml: packages.pip[{index}]: {verdict.why}"] if verdict.said else []
            moved.add(index)
    if issues:
        raise ConfigError(str(loaded.path), issues)
    return tuple(companions), frozenset(moved), tuple(notes)
