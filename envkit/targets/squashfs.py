"""charliecloud://, apptainer:// and enroot://IMAGE: a SquashFS image (an offline bundle's
rootfs.sqfs) run with no daemon and no root, by Charliecloud's ch-run, Apptainer (or
SingularityCE) or enroot. `verify --bundle` takes the first of them this machine has, in that
order, as engines are chosen. Each shares this machine's /tmp with the container, where the
suite's files are put, at the same paths; the image's environment (the ENV that ch-convert wrote
to /ch/environment) replaces this machine's."""

from __future__ import annotations

import getpass
import shutil
import uuid
from pathlib import Path

from envkit.errors import EngineUnreachableError
from envkit.targets.base import CommandResult
from envkit.targets.local import LocalTarget

# (scheme, the programs that run it, in the order looked for, as the report names it)
RUNTIMES = (
    ("charliecloud", ("ch-run",), "Charliecloud's ch-run"),
    ("apptainer", ("apptainer", "singularity"), "Apptainer"),
    ("enroot", ("enroot",), "enroot"),
)
SHARED_TMP = "/tmp:/tmp"  # noqa: S108 - this machine's /tmp, where the suite's files are
# Apptainer and enroot do not read /ch/environment: the image's ENV exported from it first.
IMAGE_ENV = (
    "/bin/sh",
    "-c",
    'while IFS= read -r kv; do case $kv in *=*) export "$kv" ;; esac; done </ch/environment; '
    'exec "$@"',
    "sh",
)


def available_runtime() -> str:
    """The first runtime this machine has (charliecloud where it has none: its error says what
    to install)."""
    found = (scheme for scheme, programs, _ in RUNTIMES if any(map(shutil.which, programs)))
    return next(found, "charliecloud")


class SquashfsTarget(LocalTarget):
    def __init__(self, runtime: str, image: str, name: str) -> None:
        super().__init__(name)
        self.runtime, self.image = runtime, image
        self.programs, self.label = next(
            (programs, label) for scheme, programs, label in RUNTIMES if scheme == runtime
        )
        self.container: str | None = None  # enroot's, made on first use, removed by close()

    @property
    def notes(self) -> list[str]:
        return [f"run by {self.label} from {self.image}"]

    def run(self, argv: list[str], timeout: float) -> CommandResult:
        program = next(filter(None, map(shutil.which, self.programs)), None)
        if program is None:
            raise EngineUnreachableError(
                f"{' or '.join(self.programs)} is not installed: this image runs through "
                f"{self.label}",
                "install it (Debian's charliecloud-runtime has ch-run, with squashfuse), or use "
                "`envkit load` and `verify --image` where there is an engine",
            )
        # ch-run refuses to start without $USER, which a service or a batch job may not set.
        user = f"USER={getpass.getuser()}"
        if self.runtime == "charliecloud":
            wrapped = ["env", user, program, "--unset-env=*", "--set-env", self.image, "--", *argv]
        elif self.runtime == "apptainer":
            gpus = ("--nv",) if Path("/dev/nvidiactl").exists() else ()
            wrapped = [program, "exec", "--cleanenv", *gpus, self.image, *IMAGE_ENV, *argv]
        else:
            wrapped = [program, "start", "--mount", SHARED_TMP, self._container(program, timeout)]
            wrapped += [*IMAGE_ENV, *argv]
        return super().run(wrapped, timeout)

    def _container(self, enroot: str, timeout: float) -> str:
        """enroot runs a container it made from the image: made once for this target."""
        if self.container is None:
            name = f"envkit-{uuid.uuid4().hex[:12]}"
            made = super().run([enroot, "create", "--name", name, self.image], timeout)
            if made.exit_code != 0:
                raise EngineUnreachableError(
                    f"enroot could not make a container from {self.image}: {made.stderr[-300:]}",
                    "see enroot's message",
                )
            self.container = name
        return self.container

    def close(self) -> None:
        if self.container is not None:
            super().run(
                [shutil.which("enroot") or "enroot", "remove", "--force", self.container], 60
            )
            self.container = None
