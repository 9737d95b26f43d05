"""system.*: the things that silently break training: /dev/shm, DataLoader workers, sshd,
the mirrors actually in effect."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from ..core.context import Context
from ..core.contract import size_bytes
from ..core.location import program_text
from ..core.registry import Skip, check, ensure


def _human(size: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            return f"{size:.1f} {unit}" if unit != "B" else f"{int(size)} B"
        size /= 1024
    return f"{size:.1f} TiB"


@check("system.shm", reference="statvfs of /dev/shm against verify.min_shm", needs_torch=False)
def shm(ctx: Context) -> str:
    """Catches a /dev/shm too small for DataLoader workers (Docker's default is 64 MB:
    'Bus error ... insufficient shared memory')."""
    path = Path(ctx.shm_path)
    ensure(path.is_dir(), f"{path} does not exist")
    stats = os.statvfs(path)
    size = stats.f_frsize * stats.f_blocks
    minimum = size_bytes(ctx.min_shm)
    ctx.metric("shm_size", size, "bytes", minimum=float(minimum))
    ensure(
        size >= minimum,
        f"{path} is {_human(size)}, below the {_human(minimum)} minimum: "
        "raise runtime.shm_size (or use ipc_host)",
    )
    return f"{path} is {_human(size)} (minimum {_human(minimum)})"


class _Squares:
    """A dataset whose items are big enough to travel through shared memory."""

    def __init__(self, count: int, floats: int) -> None:
        self.count, self.floats = count, floats

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, index: int) -> Any:
        import torch

        return torch.full((self.floats,), float(index))


@check(
    "system.dataloader_workers",
    timeout_s=120,
    reference="the dataset's known items, each seen exactly once",
)
def dataloader_workers(ctx: Context) -> str:
    """Catches DataLoader workers that die or hang moving tensors through shared memory."""
    from torch.utils.data import DataLoader

    workers, floats = ctx.dataloader
    loader = DataLoader(_Squares(16, floats), batch_size=4, num_workers=workers, timeout=60)
    seen: list[int] = []
    try:
        for batch in loader:
            seen.extend(int(v) for v in batch[:, 0].tolist())
    except RuntimeError as exc:
        raise AssertionError(
            f"DataLoader with {workers} workers failed: {exc}; raise runtime.shm_size"
        ) from None
    ensure(sorted(seen) == list(range(16)), f"DataLoader returned {seen}")
    mib = 16 * floats * 4 / 2**20
    return f"{workers} workers moved {mib:.0f} MiB through shared memory"


@check(
    "system.sshd", reference="sshd's effective settings (sshd -T) and its banner", needs_torch=False
)
def sshd(ctx: Context) -> str:
    """Catches an envkit container whose sshd is down or accepts passwords or root logins."""
    if not Path(SSHD_STARTED).is_file():  # the entrypoint writes it first, when sshd will run
        raise Skip(
            "no envkit entrypoint started sshd here (not an envkit container; or a pod's "
            "command, pyxis, Apptainer or ch-run ran the suite directly; or ssh is off)"
        )
    banner = _banner(SSHD_START_S)
    ensure(banner.startswith("SSH-2.0-"), f"port 22 answers {banner!r}, not SSH")
    settings = _sshd_settings()
    ensure(settings.get("passwordauthentication") == "no", "sshd allows password logins")
    ensure(
        settings.get("permitrootlogin") in ("no", "prohibit-password"),
        "sshd allows root password login",
    )
    ensure(
        settings.get("kbdinteractiveauthentication", "no") == "no",
        "sshd allows keyboard-interactive",
    )
    return f"{banner.strip()} listening; passwords and root refused"


# A container the suite runs in may have started a moment ago (verify --image starts one): its
# entrypoint makes the login user and installs the keys before sshd listens. A refused connection
# is asked again for this long; an sshd that never comes up still fails, after it.
SSHD_START_S = 15.0
SSHD_STARTED = "/run/envkit-sshd.pid"  # the entrypoint writes it just before it becomes sshd


def _banner(wait_s: float, port: int = 22) -> str:
    deadline = time.monotonic() + wait_s
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
                return conn.recv(64).decode("ascii", "replace")
        except ConnectionRefusedError as exc:
            if time.monotonic() >= deadline:
                raise AssertionError(
                    f"sshd is not listening on port 22 ({wait_s:.0f} s after asking): {exc}"
                ) from None
            time.sleep(0.5)
        except OSError as exc:
            raise AssertionError(f"sshd is not listening on port 22: {exc}") from None


def _sshd_settings() -> dict[str, str]:
    """Effective settings from `sshd -T` (as root), else from the config files in sshd's order."""
    with contextlib.suppress(OSError, subprocess.TimeoutExpired):
        out = subprocess.run(
            ["/usr/sbin/sshd", "-T"], capture_output=True, text=True, timeout=10, check=False
        )
        if out.returncode == 0:
            return dict(line.split(" ", 1) for line in out.stdout.splitlines() if " " in line)
    settings: dict[str, str] = {}
    files = [*sorted(Path("/etc/ssh/sshd_config.d").glob("*.conf")), Path("/etc/ssh/sshd_config")]
    for path in files:
        try:
            lines = path.read_text().splitlines()
        except OSError:
            continue
        for line in lines:
            parts = line.strip().split(None, 1)
            if len(parts) == 2 and not parts[0].startswith("#"):
                settings.setdefault(parts[0].lower(), parts[1].strip().lower())  # first value wins
    return settings


NO_PIP = 3  # pip_index's exit status where the Python has no pip


def effective_pip_index(python: str) -> str | None:
    """The index pip uses in PYTHON; None where that Python has no pip (pixi's environments
    install PyPI packages with pixi's own installer): no pip there can use another index."""
    program = program_text("pip_index")
    out = subprocess.run(
        [python, "-c", program], capture_output=True, text=True, timeout=60, check=False
    )
    if out.returncode == NO_PIP:
        return None
    if out.returncode != 0:
        raise AssertionError(f"could not read pip's configuration: {out.stderr.strip()[-200:]}")
    return out.stdout.strip().splitlines()[-1]


def apt_uris(root: str = "/") -> list[str]:
    uris = []
    base = Path(root) / "etc/apt"
    for path in [base / "sources.list", *sorted((base / "sources.list.d").glob("*.list"))]:
        if path.is_file():
            for line in path.read_text().splitlines():
                parts = line.split()
                if parts and parts[0] == "deb":
                    uris.append(next(p for p in parts[1:] if not p.startswith("[")))
    for path in sorted((base / "sources.list.d").glob("*.sources")):
        for line in path.read_text().splitlines():
            if line.lower().startswith("uris:"):
                uris += line.split(":", 1)[1].split()
    return uris


@check(
    "system.mirrors",
    reference="pip's effective index and apt's sources against the spec",
    needs_torch=False,
)
def mirrors(ctx: Context) -> str:
    """Catches mirrors that are not in effect: pip's effective index and apt's sources must equal
    the spec's (a Python without pip, as pixi's environments are, has no index to judge)."""
    want_pip = ctx.expected_pip_index
    want_apt = ctx.expected_apt_any
    if not want_pip and not want_apt:
        raise Skip("no mirrors to compare with (run through `envkit verify` with a spec)")
    found = [_pip_in_effect(ctx.python or sys.executable, str(want_pip))] if want_pip else []
    if found == [None] and not want_apt:
        raise Skip("this Python has no pip (its packages come by another installer)")
    if want_apt:
        # The spec names one archive per distro family; the image's family uses one of them.
        uris = [u.rstrip("/") for u in apt_uris()]
        hits = [u for u in want_apt if u.rstrip("/") in uris]
        ensure(
            hits,
            f"apt uses {', '.join(uris) or 'no sources'}, not the spec's mirror "
            f"({' or '.join(want_apt)})",
        )
        found.append(f"apt {', '.join(hits)}")
    return "; ".join(f or "pip: none in this Python" for f in found)


def _pip_in_effect(python: str, want: str) -> str | None:
    """pip's index in PYTHON, which must be WANT; None where PYTHON has no pip."""
    have = effective_pip_index(python)
    if have is not None:
        ensure(have.rstrip("/") == want.rstrip("/"), f"pip uses {have}, the spec says {want}")
        return f"pip {have}"
    return None
