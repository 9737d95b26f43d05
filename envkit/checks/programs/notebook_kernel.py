"""system.notebook's kernel probe, run as `python -c` on this text in the environment's Python
(which has jupyter_client): starts kernel argv[1] as JupyterLab and VS Code would, runs one line
in it, and prints what it said as JSON."""

import json
import sys
from typing import Any, Dict, List

if __name__ == "__main__":
    from jupyter_client.manager import start_new_kernel

    km, kc = start_new_kernel(kernel_name=sys.argv[1], startup_timeout=90)
    out: List[str] = []

    def hook(msg: Dict[str, Any]) -> None:
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
    print(json.dumps("".join(out).strip()))
