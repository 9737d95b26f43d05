"""charliecloud://IMAGE: a SquashFS image (or an unpacked one) run by Charliecloud's ch-run, no
daemon and no root needed: what an offline bundle's rootfs.sqfs runs through without Docker.
ch-run shares this machine's /tmp with the container, so files put here are there at the same
path; the image's own environment (its /ch/environment) replaces this machine's."""

from __future__ import annotations

import getpass
import shutil

from envkit.errors import EngineUnreachableError
from envkit.targets.base import CommandResult
from envkit.targets.local import LocalTarget


class CharliecloudTarget(LocalTarget):
    def __init__(self, image: str, name: str) -> None:
        super().__init__(name)
        self.image = image

    @property
    def notes(self) -> list[str]:
        return [f"run by Charliecloud's ch-run from {self.image}"]

    def run(self, argv: list[str], timeout: float) -> CommandResult:
        ch_run = shutil.which("ch-run")
        if ch_run is None:
            raise EngineUnreachableError(
                "ch-run is not installed: the bundle's image runs through Charliecloud",
                "install Debian's charliecloud-runtime (with squashfuse), or use `envkit load` "
                "and `verify --image` where there is an engine",
            )
        # ch-run refuses to start without $USER, which a service or a batch job may not set.
        user = f"USER={getpass.getuser()}"
        wrapped = ["env", user, ch_run, "--unset-env=*", "--set-env", self.image, "--", *argv]
        return super().run(wrapped, timeout)
