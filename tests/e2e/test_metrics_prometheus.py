"""`envkit metrics` where operators look, with the real parts: Debian's Prometheus scrapes
`envkit metrics --serve` and node_exporter's textfile collector reading `envkit metrics
--textfile`, both fed by runs of the checks on the NVML stand-in's faulty 8-GPU scenario (no GPU
here) and by a member's real container on the real engine whose process the stand-in names as a
GPU user; Prometheus' HTTP API is asked for the series, the shipped alert rules fire in it, and
every dashboard panel's query runs in it."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from envkit.metrics.dashboard import dashboard
from tests.e2e.conftest import ENV_IMAGE
from tests.e2e.images import E2E_NAME, E2E_PORT, copy_project, docker, keypair
from tests.e2e.workers import port
from tests.gpu_standin import build_standin, env_for, scenario
from tests.helpers import envkit, free_port
from tests.metrics_world import FAULTY_GPU, faulty_b200, record, run_suite_on

pytestmark = [pytest.mark.docker, pytest.mark.slow]

HOSTILE_TARGET = 'docker://node "c"\\d\ne'  # quotes, a backslash and a newline
GIB = 2**30


def _get(url: str, accept: str | None = None) -> tuple[str, str]:
    request = urllib.request.Request(url, headers={"Accept": accept} if accept else {})  # noqa: S310
    with urllib.request.urlopen(request, timeout=10) as answer:  # noqa: S310 - loopback
        return answer.read().decode(), answer.headers.get("Content-Type", "")


def _query(port: int, promql: str) -> list[dict[str, Any]]:
    url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": promql})
    body = json.loads(_get(url)[0])
    assert body["status"] == "success", body
    return list(body["data"]["result"])


def _until(what: str, ready: Any, timeout: float = 90) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        found = ready()
        if found:
            return found
        assert time.monotonic() < deadline, f"{what}: not within {timeout:.0f} s"
        time.sleep(0.5)


def _daemon(argv: list[str], log: Path, **kwargs: Any) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True, **kwargs)  # fmt: skip


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@pytest.fixture
def member_box(env_image: str, project_dir: Path, tmp_path: Path) -> Iterator[tuple[Path, int]]:
    """A per-member project with one member, alice, up on the real engine; her container's
    main process's host PID."""
    project = "envkit-metrics"
    directory = tmp_path / "project"
    directory.mkdir()
    copy_project(project_dir, directory)
    docker("tag", ENV_IMAGE, f"envkit/{project}:latest")
    config = directory / "envkit.yaml"
    key = keypair(directory, "alice")
    text = config.read_text().replace(f"name: {E2E_NAME}", f"name: {project}")
    text = text.replace(f"port: {E2E_PORT}", f"port: {port(19100)}")
    config.write_text(
        text + f"team:\n  mode: per-member\n  idle_stop: 1h\n  members:\n"
        f"    - name: alice\n      keys: ['{key}']\n"
    )
    try:
        up = envkit("up", cwd=directory)
        assert up.returncode == 0, up.stdout + up.stderr
        pid = int(docker("inspect", "-f", "{{.State.Pid}}", f"{project}-alice").stdout)
        yield directory, pid
    finally:
        envkit("down", "--volumes", "--yes", cwd=directory)
        docker("rmi", f"envkit/{project}:latest", check=False)


def test_prometheus_scrapes_the_endpoint_and_the_textfile_and_the_alerts_fire(
    member_box: tuple[Path, int], tmp_path: Path
) -> None:
    directory, alice_pid = member_box
    history = tmp_path / "history.sqlite3"
    faulty = run_suite_on(faulty_b200(), ["gpu"], tmp_path)
    record(history, faulty, "node-b")
    record(history, run_suite_on(scenario("b200-x8"), ["gpu"], tmp_path), HOSTILE_TARGET)
    world = scenario("b200-x8")
    world["gpus"][FAULTY_GPU]["processes"] = [{"pid": alice_pid, "used_bytes": 2 * GIB}]
    (tmp_path / "host.json").write_text(json.dumps(world))
    env = {**env_for(build_standin(), tmp_path / "host.json"), "ENVKIT_HISTORY": str(history)}

    textfiles = tmp_path / "textfile"
    textfiles.mkdir()
    written = envkit("metrics", "--textfile", str(textfiles), cwd=directory, env=env)
    assert written.returncode == 0, written.stderr
    ports = {name: free_port() for name in ("envkit", "node", "prometheus")}
    (tmp_path / "rules.yml").write_text(envkit("metrics", "--rules").stdout)
    (tmp_path / "prometheus.yml").write_text(yaml.safe_dump({
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "rule_files": [str(tmp_path / "rules.yml")],
        "scrape_configs": [
            {"job_name": job, "static_configs": [{"targets": [f"127.0.0.1:{ports[job]}"]}]}
            for job in ("envkit", "node")
        ],
    }))  # fmt: skip
    daemons = [
        _daemon([sys.executable, "-m", "envkit", "metrics", "--serve",
                 f"127.0.0.1:{ports['envkit']}", "--interval", "1"],
                tmp_path / "envkit.log", cwd=directory, env={**os.environ, **env}),
        _daemon(["prometheus-node-exporter", f"--web.listen-address=127.0.0.1:{ports['node']}",
                 "--collector.disable-defaults", "--collector.textfile",
                 f"--collector.textfile.directory={textfiles}"], tmp_path / "node.log"),
        _daemon(["prometheus", f"--config.file={tmp_path / 'prometheus.yml'}",
                 f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                 f"--web.listen-address=127.0.0.1:{ports['prometheus']}"],
                tmp_path / "prometheus.log"),
    ]  # fmt: skip
    try:
        port = ports["prometheus"]

        def both_up() -> bool:
            try:
                return len(_query(port, "up == 1")) == 2
            except OSError:
                return False

        _until("both scrape targets up", both_up)

        def dbe() -> list[dict[str, Any]]:
            return _query(port, f'DCGM_FI_DEV_ECC_DBE_VOL_TOTAL{{gpu="{FAULTY_GPU}",'
                                'target="node-b"}')  # fmt: skip

        found = _until("the faulty GPU's series from both ways", lambda: len(dbe()) == 2 and dbe())
        assert {r["metric"]["job"] for r in found} == {"envkit", "node"}
        assert all(r["value"][1] == "2" for r in found), found
        assert found[0]["metric"]["UUID"] == faulty["environment"]["nvml_gpus"][3]["uuid"]

        failing = _query(port, 'envkit_check_status{status="fail",job="envkit"} == 1')
        assert {(r["metric"]["target"], r["metric"]["check"]) for r in failing} >= {
            ("node-b", "gpu.ecc"),
            ("node-b", "gpu.xid"),
        }, failing
        assert {r["metric"]["target"] for r in failing} == {"node-b"}

        targets = {r["metric"]["target"] for r in _query(port, 'envkit_run_healthy{job="envkit"}')}
        assert targets == {"node-b", HOSTILE_TARGET}  # every character came back as it was

        memory = _query(port, 'envkit_member_gpu_memory_used_bytes{member="alice"}')
        assert len(memory) == 2, memory  # served and from the textfile
        assert {(r["metric"]["gpu"], r["value"][1]) for r in memory} == {
            (str(FAULTY_GPU), str(2 * GIB))
        }
        assert _query(port, 'envkit_member_state{member="alice",state="running"} == 1')

        def firing() -> list[dict[str, Any]]:
            return _query(port, 'ALERTS{alertname="EnvkitGpuFailing",alertstate="firing"}')

        alerts = _until("the failing GPU's alert firing", firing)
        assert {(a["metric"]["target"], a["metric"]["check"], a["metric"]["gpu"])
                for a in alerts} >= {("node-b", "gpu.ecc", str(FAULTY_GPU))}  # fmt: skip
        # The check's own alert is for failures no one GPU carries: not this one.
        assert not _query(port, 'ALERTS{alertname="EnvkitGpuHealthCheckFailing",check="gpu.ecc"}')
        assert _query(port, 'ALERTS{alertname="EnvkitGpuXidFailClass",xid="79"}')

        for panel in dashboard()["panels"]:
            expr = panel["targets"][0]["expr"].replace("$target", ".*").replace("$project", ".*")
            _query(port, expr)  # a query Prometheus cannot parse is an error status

        body, kind = _get(f"http://127.0.0.1:{ports['envkit']}/metrics",
                          accept="application/openmetrics-text; version=1.0.0")  # fmt: skip
        assert kind.startswith("application/openmetrics-text") and body.endswith("# EOF\n")
    finally:
        for daemon in daemons:
            _stop(daemon)


def test_a_scrape_answers_at_once_while_the_engine_does_not(
    project_dir: Path, tmp_path: Path
) -> None:
    """An engine that accepts the connection and never answers: the members' source is down
    (and says so) while the scrape answers within a second."""
    copy_project(project_dir, tmp_path)
    silent = socket.socket(socket.AF_UNIX)
    silent.bind(str(tmp_path / "docker.sock"))
    silent.listen(8)
    port = free_port()
    served = _daemon(
        [sys.executable, "-m", "envkit", "metrics", "--serve", f"127.0.0.1:{port}",
         "--interval", "1"], tmp_path / "envkit.log", cwd=tmp_path,
        env={**os.environ, "DOCKER_HOST": f"unix://{tmp_path / 'docker.sock'}",
             "ENVKIT_HISTORY": str(tmp_path / "h.sqlite3")},
    )  # fmt: skip
    try:

        def scrape() -> str | None:
            try:
                return _get(f"http://127.0.0.1:{port}/metrics")[0]
            except OSError:
                return None

        _until("the endpoint", scrape, timeout=30)
        for _ in range(3):
            started = time.monotonic()
            body = scrape()
            assert body is not None and time.monotonic() - started < 1.0
            assert 'envkit_metrics_source_up{source="members"} 0' in body, body
            assert 'envkit_metrics_source_up{source="history"} 1' in body, body
            time.sleep(1)
    finally:
        _stop(served)
        silent.close()
