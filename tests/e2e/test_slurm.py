"""`envkit verify --slurm` and `envkit health` on a real Slurm: a private munged, slurmctld and
two slurmd (n1, n2) on this machine, plus n3, configured but never started. The suite runs on
each node through Debian's CPU torch (the nodes' own python); the cross-node all-reduce runs
through torchrun over gloo."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from envkit.checks.core.contract import check_result
from tests.e2e.conftest import INTERRUPTIBLE_ENVKIT
from tests.gpu_standin import StandinNode, on_gpu, scenario, set_field, world_of
from tests.helpers import envkit as run_envkit
from tests.metrics_world import record, series
from tests.slurm_cluster import SlurmCluster

pytestmark = pytest.mark.slow
NODE_PYTHON = "/usr/bin/python3"  # Debian's python3-torch


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SlurmCluster]:
    started = SlurmCluster(tmp_path_factory.mktemp("slurm"), ("n1", "n2"), absent=("n3",))
    try:
        yield started.start()
    finally:
        started.stop()


@pytest.fixture
def healthy(cluster: SlurmCluster) -> Iterator[SlurmCluster]:
    """Every test starts and ends with no node broken, drained or busy, and no node state."""
    yield cluster
    cluster.state_file.unlink(missing_ok=True)
    for node in cluster.nodes:
        cluster.break_node(node, broken=False)
        if "drain" in cluster.node_state(node):
            cluster.resume(node)
    leftover = cluster.drained_queue()
    cluster.run("scancel", "--full", "-u", "root")
    assert not leftover, f"jobs left behind: {leftover}"


def envkit(
    cluster: SlurmCluster | dict[str, str], *args: str, cwd: Path, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """`python -m envkit ARGS` with the cluster's environment (or the one given)."""
    env = cluster.env if isinstance(cluster, SlurmCluster) else cluster
    return run_envkit(*args, cwd=cwd, env=env, inherit=False, timeout=timeout)


def verify(
    cluster: SlurmCluster, tmp_path: Path, *extra: str
) -> tuple[subprocess.CompletedProcess[str], dict[str, object]]:
    out = tmp_path / "report.json"
    done = envkit(
        cluster, "verify", "--slurm", "--python", NODE_PYTHON, "--no-bench", "--no-history",
        "--workdir", str(tmp_path / "runs"), "--json-file", str(out), *extra, cwd=tmp_path,
    )  # fmt: skip
    report = json.loads(out.read_text()) if out.exists() else {}
    return done, report


def rows(report: dict[str, object]) -> dict[str, str]:
    return {row["target"]: row["state"] for row in report["per_target"]}  # type: ignore[attr-defined]


def check_of(report: dict[str, object], target: str, check_id: str) -> dict[str, object]:
    for node in report["targets"]:  # type: ignore[attr-defined]
        if node["target"] == target:
            return next(c for c in node["checks"] if c["id"] == check_id)
    raise AssertionError(f"no report for {target}")


def test_every_node_passes_and_the_all_reduce_crosses_them(
    healthy: SlurmCluster, tmp_path: Path
) -> None:
    done, report = verify(healthy, tmp_path, "--nodelist", "n1,n2")
    assert done.returncode == 0, done.stdout + done.stderr
    assert rows(report) == {"slurm://node/n1": "passed", "slurm://node/n2": "passed"}
    for node in ("n1", "n2"):
        cross = check_of(report, f"slurm://node/{node}", "multigpu.cross_node")
        assert cross["status"] == "pass", cross
        assert "2 processes on 2 nodes over gloo" in str(cross["message"])
        busbw = cross["metrics"][0]  # type: ignore[index]
        assert busbw["name"] == "cross_node_busbw" and busbw["value"] > 0
    assert "RUNNING" in done.stderr and "COMPLETED" in done.stderr  # the progress lines
    assert list((tmp_path / "runs").iterdir()) == []  # a passing run leaves nothing behind


def test_a_broken_node_fails_its_own_row_only(healthy: SlurmCluster, tmp_path: Path) -> None:
    healthy.break_node("n2")
    done, report = verify(healthy, tmp_path, "--nodelist", "n1,n2")
    assert done.returncode == 1, done.stdout + done.stderr
    assert rows(report) == {"slurm://node/n1": "passed", "slurm://node/n2": "failed"}
    broken = check_of(report, "slurm://node/n2", "tensor.creation")
    assert broken["status"] == "error" and "planted" in str(broken["message"])
    skipped = check_of(report, "slurm://node/n1", "multigpu.cross_node")
    assert skipped["status"] == "skip" and "suite failed" in str(skipped["message"])
    kept = list((tmp_path / "runs").iterdir())
    assert len(kept) == 1 and (kept[0] / "logs" / "n2.suite.log").exists()  # kept for reading


def test_a_node_that_never_started_is_unreachable(healthy: SlurmCluster, tmp_path: Path) -> None:
    done, report = verify(healthy, tmp_path, "--nodelist", "n1,n3")
    assert done.returncode == 3, done.stdout + done.stderr
    assert rows(report) == {"slurm://node/n1": "passed", "slurm://node/n3": "unreachable"}
    (why,) = [u["message"] for u in report["unreachable"]]  # type: ignore[attr-defined]
    assert "Slurm reports it" in why and "no work was sent" in why


def test_a_wait_that_runs_out_cancels_the_job(healthy: SlurmCluster, tmp_path: Path) -> None:
    # Three nodes when two can run: Slurm keeps the job pending; envkit's wait is bounded.
    done, report = verify(healthy, tmp_path, "--nodes", "3", "--wait", "4")
    assert done.returncode == 3, done.stdout + done.stderr
    assert "stopped waiting after 4 s and cancelled job" in done.stderr
    assert "PENDING" in done.stderr
    assert len(report["unreachable"]) == 3  # type: ignore[arg-type]
    assert healthy.queue() == []


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_ctrl_c_cancels_the_job(healthy: SlurmCluster, tmp_path: Path, signum: int) -> None:
    slow = tmp_path / "slow-python"  # a node python that takes its time, so the job is running
    slow.write_text(f'#!/bin/sh\nsleep 60\nexec {NODE_PYTHON} "$@"\n')
    slow.chmod(0o755)
    process = subprocess.Popen(
        [*INTERRUPTIBLE_ENVKIT, "verify", "--slurm", "--python", str(slow),
         "--nodelist", "n1,n2", "--no-history", "--workdir", str(tmp_path / "runs")],
        cwd=tmp_path, env=healthy.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not any("RUNNING" in line for line in healthy.queue()):
            assert time.monotonic() < deadline, "the job never started"
            time.sleep(0.3)
        process.send_signal(signum)
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate()  # closes its pipes whichever way the test went
    assert process.returncode == 130, err
    assert "cancelled" in err
    assert healthy.drained_queue() == []  # squeue shows nothing of ours


def test_a_missing_runtime_is_a_clear_error(healthy: SlurmCluster, tmp_path: Path) -> None:
    (tmp_path / "envkit.yaml").write_text(
        "name: slurm-apptainer\nssh:\n  allow_no_keys: true\nruntime:\n  gpus: none\n"
        "slurm:\n  runtime: apptainer\n  image: /shared/images/env.sif\n"
    )
    done, _ = verify(healthy, tmp_path, "--nodelist", "n1")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "runtime is missing on every node" in done.stderr
    assert "neither apptainer nor singularity is installed on n1" in done.stderr


def test_bad_options_are_refused_before_slurm_sees_them(
    healthy: SlurmCluster, tmp_path: Path
) -> None:
    for bad in (["--nodelist", "n1;touch /tmp/x"], ["--time", "soon"], ["--partition", "a b"]):
        done, _ = verify(healthy, tmp_path, *bad)
        assert done.returncode == 2, done.stderr
        assert bad[0] in done.stderr and "Traceback" not in done.stderr
    assert healthy.queue() == [] and not (tmp_path / "runs").exists()


def test_health_program_drains_the_failing_node(healthy: SlurmCluster, tmp_path: Path) -> None:
    program = tmp_path / "envkit-health"
    done = envkit(
        healthy, "health", "--program", str(program), "--drain", "--python", NODE_PYTHON,
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert f"HealthCheckProgram={program}" in done.stdout
    healthy.break_node("n2")
    good = healthy.run("srun", "-w", "n1", str(program), timeout=120)
    bad = healthy.run("srun", "-w", "n2", str(program), timeout=120)
    assert good.returncode == 0, good.stdout + good.stderr
    assert bad.returncode != 0
    (line,) = bad.stdout.strip().splitlines()  # one line saying why
    assert line.startswith("envkit: ") and "torch cannot be imported" in line
    reasons = healthy.run("sinfo", "-R", "-h", "-o", "%N|%E").stdout
    assert "n2|envkit: " in reasons and "n1|" not in reasons
    assert "drain" in healthy.node_state("n2")


def _reason(cluster: SlurmCluster, node: str) -> str:
    return cluster.run("sinfo", "-h", "-N", "-n", node, "-o", "%E").stdout.strip()


def test_standin_a_drained_gpu_node_is_resumed_only_after_a_clean_burn_in(
    healthy: SlurmCluster, tmp_path: Path
) -> None:
    """What slurmd runs as n2's HealthCheckProgram (`health --drain`, $SLURMD_NODENAME set),
    its GPUs the NVML stand-in's: a fault drains n2; passing health runs keep it drained until
    a clean burn-in on it; the next one resumes it, and the node state says when and why it
    went out and when and after which run it came back. An administrator's drain is theirs."""
    slurm = {"SLURM_CONF": healthy.env["SLURM_CONF"], "SLURMD_NODENAME": "n2"}
    node = StandinNode(NODE_PYTHON, tmp_path, slurm)
    faulty = world_of("h100-sxm", on_gpu(1, set_field("ecc.volatile.uncorrected", 3)))
    code, line = node.health(faulty, "--drain")
    assert code == 1 and line.startswith("envkit: gpu.ecc: GPU 1 "), line
    assert "drain" in healthy.node_state("n2") and _reason(healthy, "n2") == line
    code, line = node.health(scenario("h100-sxm"), "--drain")
    assert code == 1 and "until a burn-in passes (envkit verify --stress 10m)" in line, line
    assert "drain" in healthy.node_state("n2") and _reason(healthy, "n2") == line[:200]

    burn_in = node.run(scenario("h100-sxm"), ["stress.gpu", "gpu.clocks", "gpu.thermal"],
                       "stress_on_cpu")  # fmt: skip
    code, line = node.health(scenario("h100-sxm"), "--drain")
    assert code == 0 and line.startswith("envkit: healthy"), line
    healthy.wait_idle(("n2",))
    back = node.service()
    assert back["out"] is False and back["returned_after"] == burn_in["started_at"], back
    assert back["reason"].startswith("envkit: gpu.ecc: GPU 1 ") and back["returned_at"], back

    # Out again; an administrator then drains n2 for their own work: the burn-in ends envkit's
    # time out of service and leaves the administrator's drain alone.
    assert node.health(faulty, "--drain")[0] == 1
    healthy.run("scontrol", "update", "nodename=n2", "state=drain", "reason=disk swap")
    node.run(scenario("h100-sxm"), ["stress.gpu", "gpu.clocks", "gpu.thermal"], "stress_on_cpu")
    assert node.health(scenario("h100-sxm"), "--drain")[0] == 0
    assert node.service()["out"] is False
    assert "drain" in healthy.node_state("n2") and _reason(healthy, "n2") == "disk swap"


def test_metrics_name_the_slurm_job_and_user_on_each_gpu(
    healthy: SlurmCluster, tmp_path: Path
) -> None:
    """dcgm-exporter's job mapping as a Slurm prolog writes it (a file per GPU index, the job's
    id), a job running on the private cluster, and squeue for its user: the GPU this machine's
    run failed carries both; a job that has ended (its file not yet removed) keeps its id."""
    job = healthy.run("sbatch", "--parsable", "-w", "n1", "--wrap", "sleep 300").stdout.strip()
    mapping = tmp_path / "job-map"
    mapping.mkdir()
    (mapping / "1").write_text(f"{job}\n")
    (mapping / "0").write_text("999999\n")
    gpus = [{"index": n, "uuid": f"GPU-{n}", "bus_id": f"0000:0{n}:00.0", "name": "NVIDIA B200"}
            for n in range(2)]  # fmt: skip
    said = "GPU 1 (NVIDIA B200, 0000:01:00.0): 2 uncorrectable ECC error(s)"
    report = {
        "schema_version": 1, "started_at": "2026-11-25T10:00:00Z", "duration_s": 1.0,
        "environment": {"hostname": socket.gethostname(), "nvml_gpus": gpus},
        "summary": {"pass": 0, "fail": 1, "skip": 0, "error": 0},
        "checks": [check_result("gpu.ecc", "fail", 0.1, said, [])],
    }  # fmt: skip
    record(tmp_path / "h.sqlite3", report, "local")
    env = dict(healthy.env, ENVKIT_HISTORY=str(tmp_path / "h.sqlite3"))
    try:
        done = envkit(env, "metrics", "--hpc-job-mapping-dir", str(mapping), cwd=tmp_path)
    finally:
        healthy.run("scancel", job)
        healthy.drained_queue()
    assert done.returncode == 0, done.stderr
    verdicts = {
        labels["gpu"]: labels for line in series(done.stdout, "envkit_gpu_check_status")
        if line.endswith(" 1") for labels in [dict(re.findall(r'(\w+)="([^"]*)"', line))]
    }  # fmt: skip
    assert verdicts["1"]["status"] == "fail" and verdicts["0"]["status"] == "pass", verdicts
    assert (verdicts["1"]["hpc_job"], verdicts["1"]["hpc_user"]) == (job, "root"), verdicts
    assert verdicts["0"]["hpc_job"] == "999999" and "hpc_user" not in verdicts["0"], verdicts


def test_health_here_reports_in_one_line(healthy: SlurmCluster, tmp_path: Path) -> None:
    ok = envkit(healthy, "health", "--python", NODE_PYTHON, cwd=tmp_path)
    assert ok.returncode == 0 and ok.stdout.startswith("envkit: healthy"), ok.stdout + ok.stderr
    (tmp_path / "envkit.yaml").write_text(
        "name: big-shm\nssh:\n  allow_no_keys: true\nruntime:\n  gpus: none\n  shm_size: 900gb\n"
        "verify:\n  min_shm: 900gb\n"
    )
    bad = envkit(healthy, "health", "--python", NODE_PYTHON, cwd=tmp_path)
    assert bad.returncode == 1
    assert bad.stdout.strip().splitlines() == [bad.stdout.strip()]
    assert "system.shm" in bad.stdout and "900" in bad.stdout


def test_no_slurm_client_is_unreachable(tmp_path: Path) -> None:
    env = dict(os.environ, PATH="/nonexistent")
    done = envkit(
        env, "verify", "--slurm", "--nodes", "1", "--no-history", "--workdir",
        str(tmp_path / "runs"), cwd=tmp_path, timeout=60,
    )  # fmt: skip
    assert done.returncode == 3, done.stderr
    assert "sbatch is not installed here" in done.stderr or "not installed here" in done.stderr


def test_a_missing_slurm_conf_is_named_at_once(tmp_path: Path) -> None:
    env = dict(os.environ, SLURM_CONF=str(tmp_path / "nowhere" / "slurm.conf"))
    started = time.monotonic()
    done = envkit(
        env, "verify", "--slurm", "--nodelist", "n1", "--no-history", "--workdir",
        str(tmp_path / "runs"), cwd=tmp_path, timeout=60,
    )  # fmt: skip
    assert done.returncode == 3, done.stderr
    assert "SLURM_CONF names" in done.stderr and time.monotonic() - started < 20
