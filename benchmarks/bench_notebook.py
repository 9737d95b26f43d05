"""Container start to a token-protected JupyterLab answering, beside sshd answering, on the e2e
project with `notebook:` on (tests/e2e/test_notebook.py's project: JupyterLab and TensorBoard
from PyPI over Debian's CPU torch).

Each run: `docker stop`, then `docker start` at t0; one thread polls sshd's port until it
sends its banner, another polls `GET /api/status` with the token until 200. Medians over the
runs; the target is JupyterLab answering < 5 s after sshd is up.

    python benchmarks/bench_notebook.py [--runs 5] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
CONTAINER = "envkit-nb"


def _envkit(directory: Path, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "envkit", *args], cwd=directory, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(done.stdout[-2000:] + done.stderr[-2000:])
    return done.stdout


def _sshd_up(port: int, started: float, out: dict[str, float]) -> None:
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=2) as sock:
                if sock.recv(8).startswith(b"SSH-"):
                    out["sshd"] = time.perf_counter() - started
                    return
        except OSError:
            pass
        time.sleep(0.05)


def _jupyter_up(port: int, token: str, started: float, out: dict[str, float]) -> None:
    request = urllib.request.Request(f"http://127.0.0.1:{port}/api/status")
    request.add_header("Authorization", f"token {token}")
    while True:
        try:
            with urllib.request.urlopen(request, timeout=2) as answer:  # noqa: S310
                if answer.status == 200:
                    out["jupyter"] = time.perf_counter() - started
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.05)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json")
    args = parser.parse_args()
    from tests.e2e.images import ensure_base_image, project_config

    directory = Path(tempfile.mkdtemp(prefix="bench-notebook-"))
    config = project_config(directory, "notebook:\n  enabled: true\n  port: 18888\n")
    text = config.read_text().replace("name: envkit-e2e", f"name: {CONTAINER}")
    config.write_text(text.replace("port: 18822", "port: 18840"))
    ensure_base_image()
    _envkit(directory, "build", "--quiet")
    _envkit(directory, "up")
    token = _envkit(directory, "notebook", "url").split("token=", 1)[1].split()[0]
    runs: list[dict[str, float]] = []
    try:
        for _ in range(args.runs):
            subprocess.run(
                ["docker", "stop", "-t", "5", CONTAINER], check=True, capture_output=True
            )
            out: dict[str, float] = {}
            started = time.perf_counter()
            subprocess.run(["docker", "start", CONTAINER], check=True, capture_output=True)
            threads = [
                threading.Thread(target=_sshd_up, args=(18840, started, out)),
                threading.Thread(target=_jupyter_up, args=(18888, token, started, out)),
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(120)
            runs.append(out)
    finally:
        _envkit(directory, "down", "--volumes")
    sshd = statistics.median(r["sshd"] for r in runs)
    jupyter = statistics.median(r["jupyter"] for r in runs)
    after = statistics.median(r["jupyter"] - r["sshd"] for r in runs)
    summary = {
        "runs": args.runs,
        "sshd_answers_s": round(sshd, 3),
        "jupyter_answers_s": round(jupyter, 3),
        "jupyter_after_sshd_s": round(after, 3),
        "each_run": runs,
    }
    print(json.dumps(summary, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=2) + "\n")


if __name__ == "__main__":
    main()
