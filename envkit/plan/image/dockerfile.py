"""The Dockerfile as a sequence of typed layers, and what every layer function shares.

Each layer is the value of one small function of the plan and the builder (plan/image/layers.py has
the sequence): a `Layer` whose instructions are composed here, in Python, where mypy and the tests
see them, BuildKit's cache mounts and the classic builder's clean-up included. Dockerfile.j2 only
lays the sequence out, a blank line between layers."""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

from envkit.plan.image.install import OFFLINE, OFFLINE_MOUNT, Mount
from envkit.plan.models.plan import Plan

# A hashed install (a uv.lock, a locked build) runs without the constraints file: pip and uv
# refuse any line that is not pinned with == in --require-hashes mode, constraints included
# (numpy's major range). What it installs was solved as a whole and judged against envkit's
# torch when the plan was made (plan/project/torch_lines.py, plan/project/pyproject.py).
# The torch layer points these at the constraints file: pip's and uv's installs, and uv's
# builds of a source package (pip hands PIP_CONSTRAINT to its build environments itself), so a
# package whose build needs torch (a CUDA extension) builds against this torch's release.
CONSTRAINT_VARIABLES = ("PIP_CONSTRAINT", "UV_CONSTRAINT", "UV_BUILD_CONSTRAINT")
WITHOUT_CONSTRAINTS = ("env", *(word for name in CONSTRAINT_VARIABLES for word in ("-u", name)))
NEXT = " \\\n && "  # the next command of one RUN, on a line of its own
LISTED = " \\\n      "  # the next package of one install, on a line of its own


# What torch was built against, as the torch layer writes it (torch_needs.py): every later pip
# and uv install reads it (PIP_CONSTRAINT, UV_CONSTRAINT), conda's pip section too.
CONSTRAINTS = "/etc/envkit/pip-constraints.txt"


@dataclass(frozen=True)
class Layer:
    """One layer of the Dockerfile: the comment lines that say why it is there (the template
    writes each as `# LINE`), then its instructions, whole. An instruction may begin with the
    comment lines that must sit right above it (hadolint's pragma, a note on that one line)."""

    comments: tuple[str, ...]
    instructions: tuple[str, ...]


def words(argv: Iterable[str]) -> str:
    """Shell words, each quoted where it has to be."""
    return " ".join(shlex.quote(word) for word in argv)


def listed(head: str, items: Iterable[str]) -> str:
    """A command followed by one quoted item per line (packages, requirements)."""
    return head + "".join(LISTED + shlex.quote(item) for item in items)


def run(mounts: tuple[str, ...], *commands: str) -> str:
    """One RUN: BuildKit's cache mounts (none for the classic builder), then the commands."""
    return "RUN " + "".join(f"{flag} \\\n    " for flag in mounts) + NEXT.join(commands)


def exec_form(instruction: str, argv: Iterable[str]) -> str:
    """An instruction in exec (JSON) form: one line, every quote and backslash escaped."""
    return f"{instruction} {json.dumps(list(argv), ensure_ascii=True)}"


def lines(text: str) -> tuple[str, ...]:
    """Comment lines written as they read, a block of text."""
    return tuple(text.splitlines())


def noted(comments: Iterable[str], instruction: str) -> str:
    """An instruction with comment lines right above it."""
    return "".join(f"# {line}\n" for line in comments) + instruction


def hadolint(rules: str, instruction: str) -> str:
    return noted((f"hadolint ignore={rules}",), instruction)


class Part(NamedTuple):
    """A piece several layers take in: its comment lines and its command."""

    comments: tuple[str, ...]
    command: str


class Kit:
    """What the layers of one Dockerfile share: one plan, one builder (BuildKit's cache mounts,
    or the classic builder's clean-up in the same layer), the installer's command."""

    def __init__(self, plan: Plan, buildkit: bool) -> None:
        self.plan, self.buildkit = plan, buildkit
        self.install = plan.install
        self.command = plan.install.command(buildkit)
        self.cache = self.mounts(plan.install.cache)
        self.locked = plan.locked is not None
        self.no_cache = () if buildkit else ("--no-cache-dir",)  # pip's, for the classic builder

    def mounts(self, *mounts: Mount) -> tuple[str, ...]:
        """BuildKit's mounts for a RUN that installs: MOUNTS, and an offline build's bundle."""
        if not self.buildkit:
            return ()
        return (*(m.flag for m in mounts), *((OFFLINE_MOUNT,) if self.install.offline else ()))

    @property
    def offline_apt(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """An offline build's apt reads only the bundle's .debs (bundle/rebuild.py writes the
        configuration), the mirror script's too: the RUN's first commands, and its last (the
        offline lists gone, none of them in the image)."""
        if not self.install.offline:
            return (), ()
        conf = f"export APT_CONFIG={OFFLINE}/apt/apt.conf"
        return (conf, "mkdir -p /tmp/envkit-lists/partial"), ("rm -rf /tmp/envkit-lists",)

    def apt(self, packages: tuple[str, ...]) -> tuple[str, ...]:
        """apt's install. Under BuildKit the lists and archives stay in cache mounts, so
        docker-clean (which deletes each download at once) is set aside for the step; the
        classic builder cleans up in the same layer instead."""
        install = listed("apt-get install -y --no-install-recommends --", packages)
        if not self.buildkit:
            return ("apt-get update", install, "apt-get clean", "rm -rf /var/lib/apt/lists/*")
        aside = "mv /etc/apt/apt.conf.d/docker-clean /tmp/"
        back = "mv /tmp/docker-clean /etc/apt/apt.conf.d/"
        return (
            f"{{ [ ! -f /etc/apt/apt.conf.d/docker-clean ] || {aside}; }}",
            "apt-get update",
            install,
            f"{{ [ ! -f /tmp/docker-clean ] || {back}; }}",
        )

    def uv(self, python: str) -> Part | None:
        """uv's bootstrap, where uv installs (or exports a uv.lock): pip brings it from the
        mirror into its own folder, run by PYTHON."""
        install = self.install
        if not self.plan.bootstraps_uv:
            return None
        kept = ", a cache kept across builds" if self.buildkit else ""
        comments = lines(f"""\
   uv {install.uv_version} installs the Python packages below: parallel downloads{kept}.
   pip brings it from the mirror into {install.uv_home}, outside the environment: in no lock
   and no `pip list`.""")
        command = (python, "-m", "pip", "install", *self.no_cache, *install.bootstrap)
        return Part(comments, words(command))

    def hashed(self, python: str, requirements: str, into: tuple[str, ...] = ()) -> str:
        """PYTHON's pip installing exactly the hashed REQUIREMENTS file, from the mirror (INTO:
        pip's `--python ENV_PYTHON`, for an environment that has no pip of its own)."""
        pip = (python, "-m", "pip", *into, "install", *self.no_cache, "--no-deps")
        pip += ("--require-hashes",)
        return words((*WITHOUT_CONSTRAINTS, *pip, *self.install.pip_indexes(), "-r", requirements))

    def pip(self, requirements: tuple[str, ...], sources: tuple[str, ...] = ()) -> str:
        """The installer's RUN for REQUIREMENTS, one per line, from the mirror (and the
        project's own SOURCES, pip's index options)."""
        command = words((*self.command, *self.install.indexes(sources=sources)))
        return run(self.cache, listed(f"{command} --", requirements))
