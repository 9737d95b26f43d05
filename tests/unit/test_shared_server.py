"""A shared GPU server (issue 28) without the engine: GPU counts made ids and unknown ids refused
against the host's GPUs as NVML lists them (through the NVML stand-in: no GPU here), the
container's activity watch reading GPU work through the same stand-in, the idle-stop rules,
the ssh-config's wake block and the cgroup mapping of GPU processes."""

from __future__ import annotations

import copy
import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from envkit.engine.gpu_use import container_of
from tests.gpu_standin import build_standin, env_for, scenario
from tests.helpers import envkit

KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGJ6k0pUu7e3Ry6mQeGq9C1Yc3W9bn1cF5Qh0m0y6s3K test"
TEAM = (
    "name: lab\nbase:\n  flavor: custom\n  image: debian:bookworm\ncuda: cpu\n"
    "ssh:\n  authorized_keys: ['{key}']\nteam:\n  mode: per-member\n  members:\n"
    "    - name: alice\n      keys: ['{key}']\n      gpus: 2\n"
    "    - name: bob\n      keys: ['{key}']\n      gpus: {bob}\n"
    "    - name: carol\n      keys: ['{key}']\n      gpus: 1\n"
)


def _four_gpus(tmp_path: Path, **fields: Any) -> dict[str, str]:
    """The H100 scenario with four GPUs (their own UUIDs), written for the stand-in."""
    data = scenario("h100-sxm")
    first = data["gpus"][0]
    data["gpus"] = []
    for index in range(4):
        gpu = copy.deepcopy(first)
        gpu["uuid"] = f"GPU-0000000{index}-aaaa-bbbb-cccc-000000000000"
        gpu.update(fields)
        data["gpus"].append(gpu)
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(data))
    return env_for(build_standin(), path)


def _line(folder: Path, text: str) -> int:
    lines = (folder / "envkit.yaml").read_text().splitlines()
    return next(number for number, line in enumerate(lines, 1) if text in line)


def _write(tmp_path: Path, bob: str) -> None:
    (tmp_path / "envkit.yaml").write_text(TEAM.format(key=KEY, bob=bob))


def test_counts_take_free_gpus_in_member_order_on_the_nvml_standin(tmp_path: Path) -> None:
    _write(tmp_path, "[0]")
    done = envkit("doctor", "--json", cwd=tmp_path, env=_four_gpus(tmp_path))
    findings = {f["check"]: f for f in json.loads(done.stdout)["findings"]}
    assignment = findings["gpu assignment"]
    assert assignment["status"] == "ok", assignment
    assert assignment["message"].startswith("alice: 1,2; bob: 0; carol: 3"), assignment


def test_a_gpu_id_the_host_lacks_stops_up_before_anything_on_the_nvml_standin(
    tmp_path: Path,
) -> None:
    _write(tmp_path, "[7]")
    up = envkit("up", cwd=tmp_path, env=_four_gpus(tmp_path))
    assert up.returncode == 2, up.stdout + up.stderr
    assert "GPU 7 (bob) is not on this host: its GPUs are 0, 1, 2, 3" in up.stderr, up.stderr
    line = _line(tmp_path, "gpus: [7]")
    assert f"envkit.yaml:{line}:" in up.stderr, up.stderr  # bob's gpus line
    assert not (tmp_path / ".envkit").exists(), "nothing is rendered for a refused up"
    doctor = envkit("doctor", "--json", cwd=tmp_path, env=_four_gpus(tmp_path))
    finding = next(
        f for f in json.loads(doctor.stdout)["findings"] if f["check"] == "gpu assignment"
    )
    assert finding["status"] == "fail" and "GPU 7" in finding["message"], finding
    assert doctor.returncode == 1


def test_counts_beyond_the_free_gpus_are_refused_on_the_nvml_standin(tmp_path: Path) -> None:
    _write(tmp_path, "[0, 1, 2]")  # alice wants 2 of the one left
    up = envkit("up", cwd=tmp_path, env=_four_gpus(tmp_path))
    assert up.returncode == 2, up.stderr
    assert "member alice asks for 2 GPU(s); 1 of this host's 4 are not given to anyone" in up.stderr


def test_without_nvml_a_count_cannot_be_resolved_and_says_why(tmp_path: Path) -> None:
    _write(tmp_path, "[0]")
    up = envkit("up", cwd=tmp_path, env={"LD_LIBRARY_PATH": str(tmp_path)})
    assert up.returncode == 2, up.stderr
    assert "cannot list the engine's GPUs" in up.stderr and "libnvidia-ml" in up.stderr


def _peek(tmp_path: Path, **gpu: Any) -> dict[str, Any]:
    """The rendered activity watch's `peek`, run here against the stand-in's GPUs."""
    _write(tmp_path, "[0]")
    assert envkit("render", cwd=tmp_path).returncode == 0
    watch = tmp_path / ".envkit" / "envkit" / "runtime" / "activity.py"
    done = subprocess.run(
        [sys.executable, str(watch), "peek"],
        env=_four_gpus(tmp_path, **gpu),
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    seen: dict[str, Any] = json.loads(done.stdout)
    return seen


@pytest.mark.parametrize(
    ("gpu", "busy", "held"),
    [
        ({"utilization": {"gpu": 0, "memory": 0}, "processes": []}, False, 0),
        ({"utilization": {"gpu": 37, "memory": 5}, "processes": []}, True, 0),
        # memory held without work is not activity: that is what an idle stop is for
        (
            {"utilization": {"gpu": 0, "memory": 0}, "processes": [{"pid": 1, "used_bytes": 9}]},
            False,
            4,
        ),
    ],
)
def test_activity_watch_reads_gpu_work_on_the_nvml_standin(
    tmp_path: Path, gpu: dict[str, Any], busy: bool, held: int
) -> None:
    seen = _peek(tmp_path, **gpu)
    assert seen["gpu_busy"] is busy and seen["gpu_processes"] == held, seen
    assert ("GPU 0 at 37%" in seen["active"]) is busy, seen


def test_idle_stop_makes_restart_on_failure_and_refuses_a_policy_that_undoes_it(
    tmp_path: Path,
) -> None:
    _write(tmp_path, "[0]")
    config = tmp_path / "envkit.yaml"
    config.write_text(config.read_text().replace("team:\n", "team:\n  idle_stop: 2h\n"))
    assert envkit("render", cwd=tmp_path).returncode == 0
    compose = (tmp_path / ".envkit" / "docker-compose.yml").read_text()
    assert 'restart: "on-failure"' in compose and 'ENVKIT_IDLE_STOP: "7200"' in compose
    config.write_text(config.read_text() + "runtime:\n  restart: unless-stopped\n")
    refused = envkit("render", cwd=tmp_path)
    assert refused.returncode == 2 and "would start an idle-stopped container" in refused.stderr
    assert f"envkit.yaml:{_line(tmp_path, 'restart:')}:" in refused.stderr, refused.stderr
    config.write_text(config.read_text().replace("idle_stop: 2h", "idle_stop: 1s"))
    assert "out of range" in envkit("render", cwd=tmp_path).stderr


def test_ssh_config_wake_reaches_the_shell_intact_through_real_ssh(tmp_path: Path) -> None:
    """The Match block's command as the real ssh client runs it (`ssh -G` evaluates Match exec):
    a path with spaces, a per cent sign and a token arrives intact; one with a quote gets the
    comment instead (OpenSSH releases disagree on quotes in Match lines)."""
    from envkit.render.ssh_config import ssh_config_blocks
    from envkit.services.project import load_project

    _write(tmp_path, "[0]")
    config = tmp_path / "envkit.yaml"
    config.write_text(config.read_text().replace("team:\n", "team:\n  idle_stop: 30m\n"))
    odd = tmp_path / "my 100% odd %h dir"
    record = "import sys, pathlib; pathlib.Path(sys.argv[1]).write_text(repr(sys.argv[2:]))"
    wake = [sys.executable, "-c", record, str(odd), "--config", str(odd)]
    (tmp_path / "ssh_config").write_text(
        ssh_config_blocks(load_project(str(config)).plan, member="bob", wake=wake)
    )
    subprocess.run(
        ["ssh", "-G", "-F", str(tmp_path / "ssh_config"), "lab-bob"],
        capture_output=True, timeout=30, check=True,
    )  # fmt: skip
    assert odd.read_text() == repr(["--config", str(odd), "bob"])
    (tmp_path / "ssh_config").write_text("")
    subprocess.run(["ssh", "-G", "-F", str(tmp_path / "ssh_config"), "lab-carol"], check=True,
                   capture_output=True, timeout=30)  # fmt: skip
    assert odd.read_text().endswith("'bob']"), "ran only for its own host"
    quoted = ssh_config_blocks(
        load_project(str(config)).plan, member="bob", wake=[*wake[:3], "it's", '"', "\\"]
    )
    assert "Match" not in quoted and "`envkit start bob` on the server" in quoted


def test_ssh_config_names_envkit_start_with_the_absolute_config(tmp_path: Path) -> None:
    _write(tmp_path, "[0]")
    config = tmp_path / "envkit.yaml"
    config.write_text(config.read_text().replace("team:\n", "team:\n  idle_stop: 30m\n"))
    blocks = envkit("ssh-config", "--member", "bob", cwd=tmp_path).stdout
    match = next(line for line in blocks.splitlines() if line.startswith("Match "))
    command = match.split(' exec "', 1)[1][:-1]
    expected = [sys.executable, "-m", "envkit", "start", "--quiet", "--config", str(config), "bob"]
    assert shlex.split(command) == expected, command
    jumped = envkit("ssh-config", "--host", "gpu1.lab", cwd=tmp_path).stdout
    assert "Match" not in jumped and "`envkit start bob` on gpu1.lab" in jumped, jumped


def test_gpu_processes_map_to_containers_by_cgroup(tmp_path: Path) -> None:
    ident = "4f" * 32
    for pid, text in (
        (10, f"0::/system.slice/docker-{ident}.scope\n"),  # systemd driver, cgroup v2
        (11, f"12:memory:/docker/{ident}\n1:name=systemd:/docker/{ident}\n"),  # v1
        (12, f"0::/machine.slice/libpod-{ident}.scope/container\n"),  # Podman
        (13, "0::/user.slice/user-1000.slice/session-2.scope\n"),  # a host process
    ):
        (tmp_path / str(pid)).mkdir()
        (tmp_path / str(pid) / "cgroup").write_text(text)
    assert [container_of(pid, tmp_path) for pid in (10, 11, 12)] == [ident] * 3
    assert container_of(13, tmp_path) is None
    assert container_of(99, tmp_path) is None  # ended meanwhile
