"""system.notebook: the container's JupyterLab answers its API with the token and refuses
without it, and the registered kernel runs the seed's small tensor op. Skipped where envkit.yaml
serves no notebook (no /etc/envkit/notebook.json in the image)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from typing import Optional, Tuple

from ..core.context import Context
from ..core.location import program_text
from ..core.registry import Skip, check, ensure

SETTINGS = "/etc/envkit/notebook.json"
EXPECTED = [0.0, 2.0, 4.0, 6.0]  # torch.arange(4.0) * 2


def _get(url: str, token: Optional[str]) -> Tuple[int, str]:
    request = urllib.request.Request(url)  # noqa: S310 - http://127.0.0.1 built above
    if token:
        request.add_header("Authorization", f"token {token}")
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:  # noqa: S310 - loopback
            return answer.status, answer.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        return exc.code, ""


def _answering(url: str, token: str, wait_s: float) -> Tuple[int, str]:
    """The server may still be starting with the container: ask again until wait_s."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            return _get(url, token)
        except (urllib.error.URLError, OSError):
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.5)


@check(
    "system.notebook",
    timeout_s=240,
    reference="the API with and without the token; the kernel's answer for torch.arange(4.0) * 2",
)
def notebook(ctx: Context) -> str:
    """Catches a notebook server that is down, answers without its token, or whose registered
    kernel cannot import torch or computes wrong."""
    if not os.path.exists(SETTINGS):
        raise Skip("no notebook in this image (notebook.enabled is false in envkit.yaml)")
    with open(SETTINGS) as handle:
        settings = dict(json.load(handle))
    base = f"http://127.0.0.1:{settings['port']}"
    try:
        with open(settings["token_file"]) as handle:
            token = handle.read().strip()
    except OSError as exc:
        raise AssertionError(f"the notebook token cannot be read: {exc}") from None
    try:
        status, _ = _answering(f"{base}/api/status", token, ctx.notebook_wait_s)
    except (urllib.error.URLError, OSError) as exc:
        raise AssertionError(f"JupyterLab does not answer on {base}: {exc}") from None
    ensure(status == 200, f"JupyterLab refused its own token (HTTP {status})")
    refused, _ = _get(f"{base}/api/status", None)
    ensure(refused in (401, 403), f"JupyterLab answers without a token (HTTP {refused})")
    kernel = str(settings["kernel"])
    argv = [sys.executable, "-c", program_text("notebook_kernel"), kernel]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=180, check=False)
    tail = (done.stderr.strip().splitlines() or [""])[-1]
    ensure(done.returncode == 0, f"kernel {kernel} did not run: {tail}")
    said = json.loads(done.stdout.strip().splitlines()[-1])
    ensure(said == str(EXPECTED), f"kernel {kernel} said {said!r}, not {EXPECTED}")
    return f"API answers with the token, {refused} without; kernel {kernel} gave {said}"
