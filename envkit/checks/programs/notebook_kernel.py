"""system.notebook's kernel run, in the environment's Python, which has jupyter_client
(JupyterLab's dependency): starts the registered kernel named by argv[1] as JupyterLab and VS Code
would, runs one line in it, and prints what it printed as JSON. Run as `python -c` on this
file's text (core/location.py's program_text), so it needs nothing of the checks package."""

from __future__ import annotations

import json
import sys
from typing import Any


def main(kernel: str) -> str:
    from jupyter_client.manager import start_new_kernel

    km, kc = start_new_kernel(kernel_name=kernel, startup_timeout=90)
    out: list[str] = []

    def hook(msg: dict[str, Any]) -> None:
        if msg["msg_type"] == "stream" and msg["content"]["name"] == "stdout":
            out.append(msg["content"]["text"])
        elif msg["msg_type"] == "error":
            out.append("ERROR " + msg["content"]["ename"] + ": " + msg["content"]["evalue"])

    try:
        kc.execute_interactive(
            "import torch; print((torch.arange(4.0) * 2).tolist())", output_hook=hook, timeout=90
        )
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    return json.dumps("".join(out).strip())


if __name__ == "__main__":
    print(main(sys.argv[1]))
