"""Whether the engine's machine can run another architecture's programs: QEMU's user-mode
emulator registered with the kernel's binfmt_misc, which is what lets BuildKit (or the classic
builder) run an arm64 image's RUN steps on an x86 host, and `docker run` start its containers.

The registration must carry the F flag (the interpreter opened when registered), or the
emulator is not found inside a container's file system. Readable only where the engine runs on
this machine; a remote engine's is its own host's to say."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from envkit.errors import EnvkitError
from envkit.platforms import architecture, known

BINFMT = Path("/proc/sys/fs/binfmt_misc")
REGISTER_FIX = (
    "register QEMU's emulator on the engine's machine: `apt-get install qemu-user-static "
    "binfmt-support` (Debian, Ubuntu) then `update-binfmts --enable qemu-{machine}`; or, "
    "where the engine may run a privileged container, `docker run --privileged --rm "
    "tonistiigi/binfmt --install {arch}`"
)


@dataclass(frozen=True)
class Emulation:
    platform: str
    registered: bool
    detail: str  # what was read, for people


def emulated_platform(native: str, arch: str) -> str | None:
    """The platform of an image of architecture ARCH (Docker's name: arm64) where an engine
    that runs NATIVE (linux/amd64) runs it through the emulator, else None."""
    if not known(arch) or architecture(arch).platform == native:
        return None
    return architecture(arch).platform


def emulation(platform: str, binfmt: Path | None = None) -> Emulation:
    """Whether PLATFORM's programs run here through a registered emulator (F flag)."""
    binfmt = binfmt or BINFMT
    machine = architecture(platform).machine
    if not (binfmt / "status").exists():
        return Emulation(platform, False, f"binfmt_misc is not mounted at {binfmt}")
    try:
        text = (binfmt / f"qemu-{machine}").read_text()
    except OSError:
        return Emulation(platform, False, f"no qemu-{machine} entry in {binfmt}")
    lines = text.splitlines()
    flags = next((line.split(":", 1)[1].strip() for line in lines if line.startswith("flags:")), "")
    interpreter = next(
        (line.split(" ", 1)[1] for line in lines if line.startswith("interpreter")), "?"
    )
    if not lines or lines[0].strip() != "enabled":
        return Emulation(platform, False, f"qemu-{machine} is registered but disabled")
    if "F" not in flags:
        return Emulation(
            platform,
            False,
            f"qemu-{machine} ({interpreter}) is registered without the F flag: containers "
            "cannot find it",
        )
    return Emulation(platform, True, f"qemu-{machine} registered ({interpreter}, flags {flags})")


def require_emulation(platform: str, native: str, remote: bool) -> None:
    """Refuse, before anything is built, a foreign platform this machine cannot emulate."""
    import sys

    if platform == native or remote or sys.platform != "linux":
        # A remote engine's host, or a VM's (Docker Desktop, Colima, Podman machine), is its
        # own: its build says so at the first RUN step if it cannot run the platform.
        return
    found = emulation(platform)
    if not found.registered:
        arch = architecture(platform)
        raise EnvkitError(
            f"building {platform} on this {native} engine needs QEMU user emulation, and "
            f"{found.detail}",
            REGISTER_FIX.format(machine=arch.machine, arch=arch.arch)
            + f"; or build it on an {arch.arch} machine",
        )
