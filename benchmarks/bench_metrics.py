"""A scrape of `envkit metrics --serve` beside `envkit status --json`, on an 8-GPU node (the NVML
stand-in's B200 x8 scenario: no GPU here) whose history holds its gpu-group run, with 3 member
containers running on the real engine (each with a process the stand-in names as a GPU user).

- status: `envkit status --json`, a cold process each time (what an operator or a cron job runs);
- metrics once: `envkit metrics`, a cold process each time (what a textfile timer runs);
- scrape: an HTTP GET of /metrics from a running `envkit metrics --serve` (what Prometheus does
  every scrape interval; it answers from the latest readings).

Interleaved, RUNS each (scrapes: 20), medians; one run on this machine. The project is built
from the e2e example on the local test base and removed afterwards (containers, volumes, image).

    python benchmarks/bench_metrics.py [--runs 5] [--json benchmarks/metrics.json]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.e2e.images import docker, ensure_base_image, keypair, project_config  # noqa: E402
from tests.gpu_standin import build_standin, env_for, scenario  # noqa: E402
from tests.helpers import free_port  # noqa: E402
from tests.metrics_world import record, run_suite_on  # noqa: E402

PROJECT = "envkit-bench-metrics"
MEMBERS = ("alice", "bob", "carol")


def envkit(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "envkit", *args], cwd=cwd, env={**os.environ, **env},
        capture_output=True, text=True, timeout=1200, check=False,
    )  # fmt: skip


def timed(argv_env: tuple[list[str], Path, dict[str, str]]) -> float:
    argv, cwd, env = argv_env
    started = time.monotonic()
    done = envkit(*argv, cwd=cwd, env=env)
    took = time.monotonic() - started
    if done.returncode != 0:
        raise SystemExit(f"envkit {' '.join(argv)} failed: {done.stdout}{done.stderr}")
    return took


def setup(folder: Path) -> tuple[Path, dict[str, str]]:
    ensure_base_image()
    project = folder / "project"
    project.mkdir()
    config = project_config(project)
    keys = {m: keypair(project, m) for m in MEMBERS}
    text = config.read_text().replace("name: envkit-e2e", f"name: {PROJECT}")
    text = text.replace("port: 18822", "port: 19200")
    members = "".join(f"    - name: {m}\n      keys: ['{k}']\n" for m, k in keys.items())
    config.write_text(text + f"team:\n  mode: per-member\n  members:\n{members}")
    for step in (["build", "--quiet"], ["up"]):
        done = envkit(*step, cwd=project, env={})
        if done.returncode != 0:
            raise SystemExit(f"envkit {step[0]}: {done.stdout[-2000:]}{done.stderr[-2000:]}")
    history = folder / "history.sqlite3"
    record(history, run_suite_on(scenario("b200-x8"), ["gpu"], folder), "ssh://node-1")
    world = scenario("b200-x8")
    for n, member in enumerate(MEMBERS):
        pid = int(docker("inspect", "-f", "{{.State.Pid}}", f"{PROJECT}-{member}").stdout)
        world["gpus"][n]["processes"] = [{"pid": pid, "used_bytes": (n + 1) * 2**30}]
    (folder / "host.json").write_text(json.dumps(world))
    env = {**env_for(build_standin(), folder / "host.json"), "ENVKIT_HISTORY": str(history)}
    return project, env


def scrape_times(project: Path, env: dict[str, str], count: int) -> tuple[list[float], int]:
    port = free_port()
    served = subprocess.Popen(
        [sys.executable, "-m", "envkit", "metrics", "--serve", f"127.0.0.1:{port}"],
        cwd=project, env={**os.environ, **env}, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}/metrics"
    try:
        deadline = time.monotonic() + 60
        while True:  # until both sources have been read once
            try:
                with urllib.request.urlopen(url, timeout=5) as answer:
                    body = answer.read().decode()
                if 'source="members"} 1' in body and 'source="history"} 1' in body:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise SystemExit("the endpoint never served both sources")
            time.sleep(0.2)
        times = []
        for _ in range(count):
            started = time.monotonic()
            with urllib.request.urlopen(url, timeout=5) as answer:
                body = answer.read().decode()
            times.append(time.monotonic() - started)
        return times, sum(1 for line in body.splitlines() if line and not line.startswith("#"))
    finally:
        os.killpg(served.pid, signal.SIGTERM)
        served.wait(timeout=15)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="envkit-bench-metrics-") as tmp:
        folder = Path(tmp)
        project, env = setup(folder)
        try:
            status: list[float] = []
            once: list[float] = []
            for _ in range(args.runs):
                status.append(timed((["status", "--json"], project, env)))
                once.append(timed((["metrics"], project, env)))
            scrapes, samples = scrape_times(project, env, 20)
        finally:
            envkit("down", "--volumes", "--yes", cwd=project, env={})
            docker("rmi", f"envkit/{PROJECT}:latest", check=False)
    result = {
        "scenario": "8 x B200 (NVML stand-in), 3 member containers, 1 target in history",
        "runs": args.runs,
        "status_json_s": statistics.median(status),
        "metrics_once_s": statistics.median(once),
        "scrape_s": statistics.median(scrapes),
        "scrape_samples": samples,
        "metrics_once_over_status": statistics.median(once) / statistics.median(status),
        "scrape_over_status": statistics.median(scrapes) / statistics.median(status),
    }
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
