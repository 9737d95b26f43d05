"""`envkit health --program PATH --bundle DIR`: a HealthCheckProgram that runs the health mode in a
bundle's image through Charliecloud's ch-run, for nodes with neither python nor envkit (only
ch-run, and the bundle where they read it).

ch-run gives the image none of the node's environment ($SLURMD_NODENAME included) and the image
has no scontrol, so the check inside only says its one line; the program prints that line and,
with --drain, drains the node itself, outside the image."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from envkit.errors import EnvkitError

SQUASHFS = "rootfs.sqfs"
# What the node's slurmd hears when ch-run itself failed (no image, no squashfuse): stdout is
# empty then, and ch-run's own message is in slurmd's log.
NOT_RUN = "envkit: the health check did not run in the bundle's image (ch-run exit $status)"


def bundle_image(bundle: Path, key: str | None, config_json: str) -> Path:
    """The bundle's SquashFS, once the bundle is checked (and signed by KEY where set)."""
    from envkit.bundle.manifest import check_bundle

    if json.loads(config_json).get("require_gpu"):
        raise EnvkitError(
            "--bundle runs the check through ch-run, which cannot give a read-only SquashFS the "
            "node's GPU driver; this config requires a GPU",
            "on GPU nodes, write the program without --bundle (the nodes' python and torch), "
            "or set verify.require_gpu: false for CPU nodes",
        )
    check_bundle(bundle, key, SQUASHFS)
    return (bundle / SQUASHFS).resolve()


def through_ch_run(
    image: Path, python: str, checks: Path, args: list[str], drain: bool, node: str | None
) -> str:
    """The program's body: the check in IMAGE, the node drained outside it on a failure."""
    inside = ["--bind", f"{checks.parent}:/mnt", "--unset-env=*", "--set-env", str(image)]
    check = shlex.join(["ch-run", *inside, "--", python, f"/mnt/{checks.name}", *args])
    body = (
        'export USER="${USER:-$(id -un)}"  # ch-run refuses to start without it\n'
        f"line=$({check})\n"
        "status=$?\n"
        f'[ -n "$line" ] || line="{NOT_RUN}"\n'
        "printf '%s\\n' \"$line\"\n"
        '[ "$status" -eq 0 ] && exit 0\n'
        # ch-run or the image's python not found or not runnable: the program's setup, not
        # the node's health; said in slurmd's log, and no node drained for it.
        '[ "$status" -ge 126 ] && [ "$status" -le 127 ] && exit 1\n'
    )
    if drain:
        name = shlex.quote(node) if node else '"${SLURMD_NODENAME:-$(hostname -s)}"'
        body += (
            f'scontrol update nodename={name} state=drain reason="$line" >&2 \\\n'
            '  || echo "envkit: could not drain the node" >&2\n'
        )
    return body + "exit 1\n"
