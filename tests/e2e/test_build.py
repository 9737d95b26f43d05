"""`envkit build` on the real engine: mirrors proven by what local mirrors served, the layer cache
(a key change rebuilds nothing; a pip change rebuilds only from the pip step), and the errors a
user meets (engine unreachable, image missing, port taken, Ctrl-C mid-build)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import ENV_IMAGE, INTERRUPTIBLE_ENVKIT, envkit
from tests.e2e.images import copy_project, docker, ensure_base_image
from tests.e2e.mirrors import PROBE, Recorder, apt_proxy, pip_index

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def _events(output: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in output.splitlines() if line.startswith("{")]


def _rebuilt_steps(events: list[dict[str, Any]]) -> list[str]:
    """Instructions that ran instead of coming from the cache (FROM is never 'cached')."""
    steps = {e["step"]: e["instruction"] for e in events if e["event"] == "step"}
    cached = {e["step"] for e in events if e["event"] == "cached"}
    return [text for step, text in sorted(steps.items()) if step not in cached and step != 1]


def test_packages_come_from_the_configured_mirrors(tmp_path: Path, project_dir: Path) -> None:
    ensure_base_image()
    config = copy_project(project_dir, tmp_path)
    pip_seen, apt_seen = Recorder(), Recorder()
    with pip_index(pip_seen) as pip_url, apt_proxy(apt_seen) as apt_url:
        text = config.read_text()
        text = text.replace("name: envkit-e2e", "name: envkit-mirror-e2e")
        text = text.replace(
            "  preset: official\n",
            f"  preset: official\n  apt: {apt_url}\n  pip: {pip_url}/simple\n"
            "  trusted_hosts: [127.0.0.1]\n",  # a plain-http index on this host: opted in
        )
        # tree: small, not in the base, and (unlike jq) without a bookworm-security update,
        # which would come from the official security host as configured.
        text = text.replace("apt: [python3-torch,", "apt: [tree, python3-torch,")
        text = text.replace("pip: [tqdm]", "pip: [envkit-probe]")
        text = text.replace("runtime:\n", "runtime:\n  build_network: host\n")
        config.write_text(text)
        built = envkit("build", "--quiet", cwd=tmp_path)
    try:
        assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
        assert "/simple/envkit-probe/" in pip_seen.paths and f"/packages/{PROBE}" in pip_seen.paths
        assert any(p.startswith("/debian/dists/bookworm/") for p in apt_seen.paths), apt_seen.paths[
            :5
        ]
        pool = [p for p in apt_seen.paths if "/pool/" in p]
        assert any(p.startswith("/debian/pool/main/t/tree/tree_") for p in pool), pool
        served = docker(
            "run",
            "--rm",
            "--entrypoint",
            "python",
            "envkit/envkit-mirror-e2e:latest",
            "-c",
            "import envkit_probe; print(envkit_probe.SERVED_BY)",
        )
        assert served.stdout.strip() == "envkit-test-index"
    finally:
        docker("rmi", "-f", "envkit/envkit-mirror-e2e:latest", check=False)


def test_key_change_rebuilds_nothing_and_pip_change_only_from_pip(
    env_image: str, tmp_path: Path, project_dir: Path
) -> None:
    config = copy_project(project_dir, tmp_path)
    tag = "envkit-test/cache:latest"
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / "id_new")], check=True
    )
    try:
        config.write_text(config.read_text().replace("[id_test.pub]", "[id_test.pub, id_new.pub]"))
        keyed = envkit("build", "--json", "--tag", tag, cwd=tmp_path)
        assert keyed.returncode == 0, keyed.stderr[-2000:]
        assert _rebuilt_steps(_events(keyed.stdout)) == [], "adding a key must rebuild no layer"

        # A requirement no earlier build on this engine can have cached (a leftover layer from a
        # benchmark or an earlier run would make the step a cache hit and the test meaningless).
        unique = f"six!=0.0.{uuid.uuid4().int % 10**9}"
        config.write_text(config.read_text().replace("pip: [tqdm]", f"pip: [tqdm, '{unique}']"))
        changed = envkit("build", "--json", "--tag", tag, cwd=tmp_path)
        assert changed.returncode == 0, changed.stderr[-2000:]
        events = _events(changed.stdout)
        rebuilt = _rebuilt_steps(events)
        assert rebuilt and rebuilt[0].startswith("RUN python -m pip install --no-cache-dir"), (
            rebuilt,
            changed.stdout[-3000:],
        )
        assert unique in rebuilt[0]
        steps = [e["instruction"] for e in events if e["event"] == "step"]
        first = steps.index(rebuilt[0])
        assert all(
            not s.startswith(("RUN sh /opt/envkit/apt", "RUN python3 -m venv")) for s in rebuilt
        )
        assert first > 10, "everything before the pip step came from the cache"
    finally:
        docker("rmi", "-f", tag, check=False)


def test_engine_unreachable_exits_3_naming_the_socket(tmp_path: Path, project_dir: Path) -> None:
    copy_project(project_dir, tmp_path)
    done = envkit("build", cwd=tmp_path, env={"DOCKER_HOST": "unix:///tmp/envkit-no-such.sock"})
    assert done.returncode == 3
    assert "unix:///tmp/envkit-no-such.sock" in done.stderr and "start it" in done.stderr
    assert "Traceback" not in done.stderr


def test_up_without_an_image_suggests_build(tmp_path: Path, project_dir: Path) -> None:
    config = copy_project(project_dir, tmp_path)
    config.write_text(config.read_text().replace("name: envkit-e2e", "name: envkit-never-built"))
    done = envkit("up", cwd=tmp_path)
    assert done.returncode == 2 and "envkit build" in done.stderr


def test_up_with_a_taken_port_names_port_and_member(
    env_image: str, tmp_path: Path, project_dir: Path
) -> None:
    config = copy_project(project_dir, tmp_path)
    key = (project_dir / "id_test.pub").read_text().strip()
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    taken = holder.getsockname()[1]
    config.write_text(
        config.read_text().replace("name: envkit-e2e", "name: envkit-ports")
        + f"team:\n  mode: per-member\n  members:\n    - name: alice\n      keys: ['{key}']\n"
        f"      port: {taken}\n"
    )
    docker("tag", ENV_IMAGE, "envkit/envkit-ports:latest")
    try:
        done = envkit("up", cwd=tmp_path)
        assert done.returncode == 2
        assert f"host port 127.0.0.1:{taken} (member alice): in use" in done.stderr
    finally:
        holder.close()
        docker("rmi", "envkit/envkit-ports:latest", check=False)


def test_ctrl_c_during_a_build_leaves_no_containers(
    env_image: str, tmp_path: Path, project_dir: Path
) -> None:
    config = copy_project(project_dir, tmp_path)
    config.write_text(config.read_text().replace("pip: [tqdm]", "pip: [tqdm, six]"))
    proc = subprocess.Popen(
        [
            *INTERRUPTIBLE_ENVKIT,
            "build",
            "--no-cache",
            "--tag",
            "envkit-test/interrupted:latest",
        ],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=os.environ.copy(),
    )
    assert proc.stdout is not None
    for line in proc.stdout:  # wait until a RUN step is under way inside a build container
        if "RUN sh /opt/envkit/apt" in line:
            break
    time.sleep(3)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err[-2000:]
    assert "Traceback" not in err
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        left = docker("ps", "-aq", "--filter", "label=io.envkit.project=envkit-e2e").stdout.split()
        if not left:
            break
        time.sleep(2)
    assert not left, "the interrupted build left containers behind"
    assert docker("image", "inspect", "envkit-test/interrupted:latest", check=False).returncode != 0
    for path in (tmp_path / ".envkit").rglob("*"):
        assert not path.name.endswith(".tmp"), f"half-written file {path}"
