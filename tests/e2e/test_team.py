"""A team on the real engine: per-member containers on one image, members joining and leaving
with `envkit up` (no rebuild, other members' containers untouched, keys re-injected in place),
and a shared container whose keys change without a restart. Logins are real OpenSSH sessions."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import ENV_IMAGE, openssh
from tests.e2e.images import E2E_NAME, E2E_PORT, copy_project, docker, keypair
from tests.e2e.workers import port
from tests.helpers import envkit

TEAM_PORT = port(19000)  # the team's base: members' ports lie above it

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def _identity(name: str) -> tuple[str, str]:
    """A container's id and start time: both unchanged means nobody touched it."""
    out = docker("inspect", "-f", "{{.Id}} {{.State.StartedAt}}", name).stdout.split()
    return out[0], out[1]


def _config(base: str, project: str, mode: str, members: dict[str, list[str]]) -> str:
    lines = [f"team:\n  mode: {mode}\n  members:\n"]
    for name, keys in members.items():
        quoted = ", ".join(f"'{k}'" for k in keys)
        lines.append(f"    - name: {name}\n      keys: [{quoted}]\n")
    text = base.replace(f"name: {E2E_NAME}", f"name: {project}")
    text = text.replace(f"port: {E2E_PORT}", f"port: {TEAM_PORT}")
    return text + "".join(lines)


@pytest.fixture
def team_project(env_image: str, project_dir: Path, tmp_path: Path) -> Iterator[tuple[Path, str]]:
    project = "envkit-team"
    copy_project(project_dir, tmp_path)
    docker("tag", ENV_IMAGE, f"envkit/{project}:latest")
    yield tmp_path, project
    envkit("down", "--volumes", "--yes", cwd=tmp_path)
    docker("rmi", f"envkit/{project}:latest", check=False)


def _port(directory: Path, member: str) -> int:
    blocks = envkit("ssh-config", "--member", member, cwd=directory).stdout
    return int(blocks.split("    Port ", 1)[1].split()[0])


def test_members_join_and_leave_without_touching_the_others(
    team_project: tuple[Path, str],
) -> None:
    directory, project = team_project
    config = directory / "envkit.yaml"
    base = config.read_text()
    keys = {m: keypair(directory, m) for m in ("alice", "bob", "carol", "alice2")}
    image = docker("image", "inspect", "-f", "{{.Id}}", f"envkit/{project}:latest").stdout

    config.write_text(
        _config(base, project, "per-member", {"alice": [keys["alice"]], "bob": [keys["bob"]]})
    )
    first = envkit("up", cwd=directory)
    assert first.returncode == 0, first.stdout + first.stderr
    alice_port = _port(directory, "alice")
    login = openssh(alice_port, directory / "alice", "id -un", user="alice")
    assert login.stdout.strip() == "alice", login.stderr
    assert openssh(alice_port, directory / "bob", "true", user="alice").returncode == 255, (
        "bob's key must not open alice's container"
    )
    alice, bob = _identity(f"{project}-alice"), _identity(f"{project}-bob")

    # carol joins: her container appears, nobody else's is recreated or restarted.
    config.write_text(
        _config(
            base,
            project,
            "per-member",
            {"alice": [keys["alice"]], "bob": [keys["bob"]], "carol": [keys["carol"]]},
        )
    )
    joined = envkit("up", "--json", cwd=directory)  # stdout: one JSON object, nothing else
    assert joined.returncode == 0, joined.stdout + joined.stderr
    assert _identity(f"{project}-alice") == alice and _identity(f"{project}-bob") == bob
    carol_port = _port(directory, "carol")
    report = json.loads(joined.stdout)
    states = {c["member"]: (c["state"], c["ssh_port"]) for c in report["containers"]}
    assert states == {
        "alice": ("healthy", alice_port),
        "bob": ("healthy", _port(directory, "bob")),
        "carol": ("healthy", carol_port),
    }, report
    assert report["healthy"] is True and report["removed"] == []
    assert f"{project}-carol: healthy" in joined.stderr, "the lines for people go to stderr"
    assert _port(directory, "alice") == alice_port, "a newcomer never moves anyone's port"
    login = openssh(carol_port, directory / "carol", "id -un", user="carol")
    assert login.stdout.strip() == "carol", login.stderr

    # bob leaves and alice adds a second key: bob's container goes, alice's keys change in place.
    config.write_text(
        _config(
            base,
            project,
            "per-member",
            {"alice": [keys["alice"], keys["alice2"]], "carol": [keys["carol"]]},
        )
    )
    left = envkit("up", cwd=directory)
    assert left.returncode == 0, left.stdout + left.stderr
    assert f"{project}-bob: removed" in left.stdout
    # 3: her two keys and the lead's (ssh.authorized_key_files reach every member's container).
    assert f"{project}-alice: healthy (keys refreshed: 3)" in left.stdout
    names = docker("ps", "-a", "--format", "{{.Names}}").stdout.split()
    assert f"{project}-bob" not in names
    assert _identity(f"{project}-alice") == alice, "alice's container was restarted or recreated"
    assert _port(directory, "carol") == carol_port
    new_key = openssh(alice_port, directory / "alice2", "id -un", user="alice")
    assert new_key.stdout.strip() == "alice", new_key.stderr
    assert docker("image", "inspect", "-f", "{{.Id}}", f"envkit/{project}:latest").stdout == image

    # Running it again is a no-op: no refresh reported, nothing restarted.
    again = envkit("up", cwd=directory)
    assert again.returncode == 0 and "refreshed" not in again.stdout
    assert _identity(f"{project}-alice") == alice
    status = [
        line
        for line in envkit("status", cwd=directory).stdout.splitlines()
        if not line.startswith(" ")  # a container's line, not its activity below it
    ]
    short = image.strip().removeprefix("sha256:")[:12]
    containers = [line for line in status if "home of " not in line]
    assert len(containers) == 2 and all(f"image {short}" in line for line in containers), status
    # bob's home stays (nothing a member wrote is lost), and status says how to delete it.
    assert any("home of bob, who is no longer in team.members" in line for line in status), status

    # down --volumes also removes bob's host-key volume, though he is no longer a service.
    label = f"label=io.envkit.project={project}"
    assert f"{project}-bob-hostkeys" in docker("volume", "ls", "-q", "--filter", label).stdout
    assert envkit("down", "--volumes", "--yes", cwd=directory).returncode == 0
    assert docker("volume", "ls", "-q", "--filter", label).stdout.strip() == ""


def test_shared_container_takes_and_drops_keys_without_a_restart(
    team_project: tuple[Path, str],
) -> None:
    directory, project = team_project
    config = directory / "envkit.yaml"
    base = config.read_text()
    keys = {m: keypair(directory, m) for m in ("amy", "ben")}
    config.write_text(_config(base, project, "shared", {"amy": [keys["amy"]]}))
    assert envkit("up", cwd=directory).returncode == 0
    before = _identity(project)
    assert openssh(TEAM_PORT, directory / "amy", "id -un").stdout.strip() == "dev"
    assert openssh(TEAM_PORT, directory / "ben", "true").returncode == 255

    config.write_text(_config(base, project, "shared", {"ben": [keys["ben"]]}))
    swapped = envkit("up", cwd=directory)
    assert swapped.returncode == 0, swapped.stdout + swapped.stderr
    assert "keys refreshed" in swapped.stdout
    assert _identity(project) == before, "the shared container was restarted"
    assert openssh(TEAM_PORT, directory / "ben", "id -un").stdout.strip() == "dev"
    assert openssh(TEAM_PORT, directory / "amy", "true").returncode == 255, "amy left: key revoked"


@pytest.mark.parametrize("path", ["compose", "sdk"])
def test_each_members_cpu_and_memory_limits_reach_their_container_only(
    team_project: tuple[Path, str], path: str
) -> None:
    directory, project = team_project
    config = directory / "envkit.yaml"
    alice, bob = keypair(directory, "alice"), keypair(directory, "bob")
    config.write_text(
        _config(config.read_text(), project, "per-member", {"alice": [alice], "bob": [bob]})
        .replace("    - name: bob\n", "      cpus: 1.5\n      memory: 512m\n    - name: bob\n")
    )  # fmt: skip
    env = {"ENVKIT_COMPOSE": "sdk"} if path == "sdk" else {}
    up = envkit("up", cwd=directory, env=env)
    assert up.returncode == 0, up.stdout + up.stderr
    limits = {
        member: docker(
            "inspect", "-f", "{{.HostConfig.NanoCpus}} {{.HostConfig.Memory}}",
            f"{project}-{member}",
        ).stdout.split()
        for member in ("alice", "bob")
    }  # fmt: skip
    assert limits["alice"] == [str(1_500_000_000), str(512 * 1024**2)], limits
    assert limits["bob"] == ["0", "0"], "bob's container has no limits of alice's"


def _state(name: str) -> tuple[str, str, str]:
    out = docker(
        "inspect", "-f", "{{.State.Status}} {{.State.ExitCode}} {{.RestartCount}}", name
    ).stdout.split()  # fmt: skip
    return out[0], out[1], out[2]


def _wait_for(name: str, status: str, seconds: float) -> tuple[str, str, str]:
    deadline = time.monotonic() + seconds
    while True:
        state = _state(name)
        if state[0] == status or time.monotonic() > deadline:
            return state
        time.sleep(0.5)


def _member_status(directory: Path, member: str) -> dict[str, Any]:
    shown = envkit("status", "--json", cwd=directory)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    entries = json.loads(shown.stdout)["containers"]
    return next(e for e in entries if e["member"] == member)


def test_idle_stop_stops_after_the_last_session_keeps_home_and_wakes_on_ssh_and_up(
    team_project: tuple[Path, str],
) -> None:
    directory, project = team_project
    config = directory / "envkit.yaml"
    key = keypair(directory, "alice")
    text = _config(config.read_text(), project, "per-member", {"alice": [key]})
    config.write_text(text.replace("team:\n", "team:\n  idle_stop: 4s\n"))
    name = f"{project}-alice"
    up = envkit("up", cwd=directory)
    assert up.returncode == 0, up.stdout + up.stderr
    port = _port(directory, "alice")

    # A session longer than idle_stop keeps the container; status sees it while it lasts.
    session = subprocess.Popen(
        ["ssh", "-p", str(port), "-i", str(directory / "alice"), "-o", "BatchMode=yes",
         "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
         "alice@127.0.0.1", "echo kept > ~/marker; sleep 9; echo done"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    time.sleep(3)
    during = _member_status(directory, "alice")
    assert during["state"] == "running" and during["sessions"] >= 1, during
    assert during["idle_s"] is not None and during["idle_s"] < 2, during
    out, _ = session.communicate(timeout=30)
    # "done" is the proof the container lived through the session; its state right after is a
    # race with idle_stop (4 s), so it is not asserted here.
    assert out.strip() == "done", "the session was cut short: the container stopped under it"

    # Once the session ends: stopped after idle_stop (and the 30 s start grace), by its own
    # exit 0; restart: on-failure leaves it stopped.
    stopped = _wait_for(name, "exited", 45)
    assert stopped == ("exited", "0", "0"), stopped
    time.sleep(2)
    assert _state(name)[0] == "exited", "the engine started it again"
    after = _member_status(directory, "alice")
    assert after["stopped_idle"] is True and after["state"] == "exited", after

    # The generated ssh-config starts it as alice connects; her home is as she left it.
    blocks = envkit("ssh-config", "--member", "alice", "--identity", str(directory / "alice"),
                    cwd=directory).stdout  # fmt: skip
    assert "Match originalhost" in blocks, blocks
    (directory / "ssh_config").write_text(blocks)
    woken = subprocess.run(
        ["ssh", "-F", str(directory / "ssh_config"), "-o", "BatchMode=yes",
         "-o", "UserKnownHostsFile=/dev/null", name, "cat ~/marker"],
        capture_output=True, text=True, timeout=90, check=False,
    )  # fmt: skip
    assert woken.stdout.strip() == "kept", woken.stderr

    # Idle again, it stops again; `envkit up` brings it back, home kept.
    assert _wait_for(name, "exited", 45)[0] == "exited"
    again = envkit("up", cwd=directory)
    assert again.returncode == 0, again.stdout + again.stderr
    assert _state(name)[0] == "running"
    assert openssh(port, directory / "alice", "cat ~/marker", user="alice").stdout.strip() == "kept"


def test_status_json_maps_gpu_processes_and_kernels_to_members_on_the_nvml_standin(
    team_project: tuple[Path, str], tmp_path: Path
) -> None:
    """GPU processes come from the NVML stand-in (no GPU here), naming the host PIDs of real
    processes in the members' real containers; the kernel is a real process of a kernel's
    command line burning CPU (the watch's fallback when Jupyter cannot be asked)."""
    from tests.gpu_standin import build_standin, env_for, scenario

    directory, project = team_project
    config = directory / "envkit.yaml"
    keys = {m: keypair(directory, m) for m in ("alice", "bob")}
    config.write_text(
        _config(config.read_text(), project, "per-member", {m: [k] for m, k in keys.items()})
    )
    assert envkit("up", cwd=directory).returncode == 0
    pids = {
        m: int(docker("inspect", "-f", "{{.State.Pid}}", f"{project}-{m}").stdout)
        for m in keys
    }  # fmt: skip
    data = scenario("h100-sxm")
    gib = 2**30
    data["gpus"][0].update(
        utilization={"gpu": 40, "memory": 10},
        processes=[
            {"pid": pids["alice"], "used_bytes": 2 * gib},
            {"pid": os.getpid(), "used_bytes": gib},
        ],
    )
    data["gpus"][1].update(processes=[{"pid": pids["bob"], "used_bytes": 3 * gib}])
    (tmp_path / "scenario.json").write_text(json.dumps(data))
    docker("exec", "-d", f"{project}-alice", "python3", "-c", "while True: pass",
           "-m", "ipykernel_launcher")  # fmt: skip
    time.sleep(1)
    env = env_for(build_standin(), tmp_path / "scenario.json")
    shown = envkit("status", "--json", cwd=directory, env=env)
    assert shown.returncode == 0, shown.stderr
    report = json.loads(shown.stdout)
    assert report["gpus_read"] == "nvml"
    members = {e["member"]: e for e in report["containers"]}
    assert members["alice"]["gpu_use"] == [
        {"gpu": "0", "memory_used_bytes": 2 * gib, "processes": 1,
         "uuid": data["gpus"][0]["uuid"], "utilization": 40}
    ], members["alice"]  # fmt: skip
    assert [g["gpu"] for g in members["bob"]["gpu_use"]] == ["1"]
    assert members["alice"]["kernels"] == 1 and members["alice"]["busy_kernels"] == 1
    assert members["bob"]["kernels"] == 0 and members["bob"]["sessions"] == 0
    others = report["other_gpu_processes"]
    assert [(o["pid"], o["container_id"]) for o in others] == [(os.getpid(), None)], others
    table = envkit("status", cwd=directory, env=env).stdout
    assert "GPU 0: 2.0 GiB by 1 process(es), 40 % busy" in table, table
    assert f"pid {os.getpid()} (the host, not this project's)" in table, table
