"""`make test`'s first step: an empty Docker engine that stores layers with fuse-overlayfs is
switched to the kernel's overlay2, where this kernel mounts overlayfs on the engine's folder.

Why: fuse-overlayfs runs every file operation of a build or a container through a process in
user space. On this 2-core machine kind a third of the e2e suite's CPU went there, and the same
build (apt-get install, a copy and byte-compiling of /usr/lib, a tar of it) took 92 s on
fuse-overlayfs and 49 s on overlay2, each on an engine of its own, one after the other
(2026-12-02). overlay2 is Docker's own default wherever the kernel allows it; the engine stays
the machine's real one, with every other setting as it was.

Only an engine that holds nothing is switched: no container, image or volume (a new driver
starts from an empty store, so anything there would vanish from view), only as root, only where
the setting comes from /etc/docker/daemon.json (which is kept beside it as daemon.json.envkit-kept)
and only where a test mount of overlayfs in the engine's folder works. If the engine does not come
back on overlay2, the kept file is put back and the engine started as it was. Anything else: one
line says why the engine was left alone, and the tests run on it as it is.
ENVKIT_TEST_KEEP_ENGINE=1 leaves the engine alone whatever it is.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CONFIG = Path("/etc/docker/daemon.json")
KEPT = CONFIG.with_name("daemon.json.envkit-kept")
PIDFILE = Path("/var/run/docker.pid")
LOG = Path("/var/log/envkit-dockerd.log")


def say(text: str) -> None:
    print(f"engine storage: {text}", flush=True)


def docker(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["docker", *args], capture_output=True, text=True, timeout=60, check=False
    )


def engine_info() -> dict[str, object] | None:
    done = docker("info", "--format", "{{json .}}")
    if done.returncode != 0:
        return None
    info = json.loads(done.stdout)
    return info if isinstance(info, dict) else None


def daemon_settings() -> dict[str, object] | str:
    """daemon.json's settings, or why they cannot be read."""
    try:
        settings = json.loads(CONFIG.read_text())
    except (OSError, ValueError) as error:
        return f"{CONFIG} cannot be read ({error})"
    return settings if isinstance(settings, dict) else f"{CONFIG} is not a JSON object"


def why_not(info: dict[str, object], settings: dict[str, object] | str) -> str | None:
    """Why this engine is left alone, or None where it can be switched."""
    if os.environ.get("ENVKIT_TEST_KEEP_ENGINE") == "1":
        return "kept: ENVKIT_TEST_KEEP_ENGINE=1"
    if os.geteuid() != 0:
        return "fuse-overlayfs kept: switching the engine's driver needs root"
    held = {
        "containers": int(str(info.get("Containers") or 0)),
        "images": int(str(info.get("Images") or 0)),
        "volumes": len(docker("volume", "ls", "-q").stdout.split()),
    }
    if any(held.values()):
        counts = ", ".join(f"{n} {what}" for what, n in held.items() if n)
        return f"fuse-overlayfs kept: the engine holds {counts}, which overlay2 would not show"
    if isinstance(settings, str):
        return f"fuse-overlayfs kept: {settings}"
    if settings.get("storage-driver") != "fuse-overlayfs":
        return f"fuse-overlayfs kept: it is not {CONFIG}'s storage-driver (set by a flag?)"
    if not PIDFILE.is_file():
        return f"fuse-overlayfs kept: no {PIDFILE} names the engine's process"
    if not overlay_mounts(Path(str(info.get("DockerRootDir") or "/var/lib/docker"))):
        return "fuse-overlayfs kept: the kernel does not mount overlayfs in the engine's folder"
    return None


def overlay_mounts(root: Path) -> bool:
    """A real overlayfs mount in ROOT's file system: what overlay2 itself will do."""
    with tempfile.TemporaryDirectory(dir=root, prefix="envkit-overlay-probe-") as probe:
        parts = [Path(probe, name) for name in ("lower", "upper", "work", "merged")]
        for part in parts:
            part.mkdir()
        lower, upper, work, merged = parts
        options = f"lowerdir={lower},upperdir={upper},workdir={work}"
        mounted = subprocess.run(
            ["mount", "-t", "overlay", "overlay", "-o", options, str(merged)],
            capture_output=True,
            check=False,
        )
        if mounted.returncode != 0:
            return False
        subprocess.run(["umount", str(merged)], check=False)
        return True


def restart_engine() -> bool:
    """Stop the engine's process and start it again with the same command line; True once it
    answers. systemd's unit where systemd runs the machine."""
    if Path("/run/systemd/system").is_dir():
        subprocess.run(["systemctl", "restart", "docker"], check=False)
        return wait_for_engine()
    pid = int(PIDFILE.read_text().strip())
    command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[:-1]
    os.kill(pid, signal.SIGTERM)
    for _ in range(300):
        if not Path(f"/proc/{pid}").exists():
            break
        time.sleep(0.1)
    with LOG.open("ab") as log:
        subprocess.Popen(  # the engine's own command line, read from /proc
            [part.decode() for part in command],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
        )
    return wait_for_engine()


def wait_for_engine() -> bool:
    for _ in range(120):
        if engine_info() is not None:
            return True
        time.sleep(0.5)
    return False


def main() -> int:
    if shutil.which("docker") is None:
        return 0
    info = engine_info()
    if info is None or info.get("Driver") != "fuse-overlayfs":
        return 0
    settings = daemon_settings()
    reason = why_not(info, settings)
    if reason:
        say(reason)
        return 0
    assert isinstance(settings, dict)  # why_not names unreadable settings
    shutil.copy2(CONFIG, KEPT)
    CONFIG.write_text(json.dumps({**settings, "storage-driver": "overlay2"}, indent=2) + "\n")
    if restart_engine() and (engine_info() or {}).get("Driver") == "overlay2":
        say(f"fuse-overlayfs -> overlay2 (the engine held nothing; {KEPT.name} kept)")
        return 0
    shutil.copy2(KEPT, CONFIG)
    if restart_engine():
        say(f"fuse-overlayfs kept: the engine did not come back on overlay2 (see {LOG})")
        return 0
    say(f"the engine did not come back after the switch was undone: see {LOG}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
