"""Notebooks in the box on the real engine: the e2e project with `notebook:` on (JupyterLab and
TensorBoard from PyPI, the environment's Python, Debian's CPU torch, registered as a kernel),
built by `envkit build` and started by `envkit up`. The kernel is driven through the server's
own REST API and websocket, the lab page opened in the real headless Chromium through an SSH
tunnel, and per-member servers added and removed with `envkit up`."""

from __future__ import annotations

import json
import socket
import subprocess
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.images import (
    E2E_NAME,
    E2E_PORT,
    copy_project,
    docker,
    ensure_base_image,
    keypair,
    project_config,
)
from tests.e2e.workers import port
from tests.helpers import envkit, free_port

pytestmark = [pytest.mark.docker, pytest.mark.slow]
PROJECT = "envkit-nb"
SSH_PORT, NOTEBOOK_PORT, BOARD_PORT = port(18840), port(18888), port(18606)
NOTEBOOK = (
    f"notebook:\n  enabled: true\n  port: {NOTEBOOK_PORT}\n"
    f"  tensorboard:\n    enabled: true\n    port: {BOARD_PORT}\n"
)


def _config(directory: Path, team: str = "") -> None:
    config = project_config(directory, NOTEBOOK + team)
    text = config.read_text().replace(f"name: {E2E_NAME}", f"name: {PROJECT}")
    config.write_text(text.replace(f"port: {E2E_PORT}", f"port: {SSH_PORT}"))


@pytest.fixture(scope="module")
def box(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The notebook project, built and up (shared mode, one member besides the test key)."""
    directory = tmp_path_factory.mktemp("notebook")
    alice = keypair(directory, "alice")
    _config(directory, f"team:\n  members:\n    - name: alice\n      keys: ['{alice}']\n")
    ensure_base_image()
    built = envkit("build", "--quiet", cwd=directory)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    up = envkit("up", cwd=directory)
    try:
        assert up.returncode == 0, up.stdout + up.stderr
        yield directory
    finally:
        envkit("down", "--volumes", "--yes", cwd=directory)
        docker("rmi", "-f", f"envkit/{PROJECT}:latest", check=False)


def url_of(directory: Path, *extra: str) -> tuple[int, str]:
    done = envkit("notebook", "url", *extra, cwd=directory)
    assert done.returncode == 0, done.stderr
    first = done.stdout.splitlines()[0]  # http://127.0.0.1:PORT/lab?token=TOKEN
    port = int(first.split(":")[2].split("/")[0])
    return port, first.split("token=", 1)[1]


def http(
    url: str, token: str | None = None, method: str = "GET", body: object = None
) -> tuple[int, str]:
    request = urllib.request.Request(url, method=method)  # noqa: S310 - http://127.0.0.1
    if token:
        request.add_header("Authorization", f"token {token}")
    data = json.dumps(body).encode() if body is not None else None
    try:
        with urllib.request.urlopen(request, data=data, timeout=20) as answer:  # noqa: S310
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, ""


def answering(port: int, token: str, wait_s: float = 90) -> int:
    deadline = time.monotonic() + wait_s
    while True:
        try:
            return http(f"http://127.0.0.1:{port}/api/status", token)[0]
        except (urllib.error.URLError, OSError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def test_the_api_answers_with_the_token_and_refuses_without(box: Path) -> None:
    port, token = url_of(box)
    assert port == NOTEBOOK_PORT
    assert answering(port, token) == 200
    assert http(f"http://127.0.0.1:{port}/api/status")[0] == 403
    assert http(f"http://127.0.0.1:{port}/api/contents", "not-the-token")[0] == 403
    status, specs = http(f"http://127.0.0.1:{port}/api/kernelspecs", token)
    assert status == 200 and PROJECT in json.loads(specs)["kernelspecs"]
    board = urllib.request.urlopen(f"http://127.0.0.1:{BOARD_PORT}/", timeout=30)
    assert board.status == 200 and "TensorBoard" in board.read().decode()


def test_a_kernel_started_through_the_api_computes_the_seed_answer(box: Path) -> None:
    import websocket

    port, token = url_of(box)
    answering(port, token)
    status, text = http(f"http://127.0.0.1:{port}/api/kernels", token, "POST", {"name": PROJECT})
    assert status == 201, text
    kernel = json.loads(text)["id"]
    ws = websocket.create_connection(
        f"ws://127.0.0.1:{port}/api/kernels/{kernel}/channels",
        header=[f"Authorization: token {token}"], timeout=120,
    )  # fmt: skip
    try:
        msg_id = uuid.uuid4().hex
        ws.send(json.dumps({
            "header": {"msg_id": msg_id, "username": "test", "session": uuid.uuid4().hex,
                       "msg_type": "execute_request", "version": "5.3"},
            "parent_header": {}, "metadata": {}, "channel": "shell",
            "content": {"code": "import torch\nprint((torch.arange(4.0) * 2).tolist())",
                        "silent": False, "store_history": False, "user_expressions": {},
                        "allow_stdin": False},
        }))  # fmt: skip
        printed = ""
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            message = json.loads(ws.recv())
            if message.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            if message["msg_type"] == "stream" and message["content"]["name"] == "stdout":
                printed += message["content"]["text"]
            if message["msg_type"] == "error":
                raise AssertionError(message["content"])
            if message["msg_type"] == "status" and message["content"]["execution_state"] == "idle":
                break
    finally:
        ws.close()
        http(f"http://127.0.0.1:{port}/api/kernels/{kernel}", token, "DELETE")
    assert printed.strip() == "[0.0, 2.0, 4.0, 6.0]"


def test_the_lab_opens_in_chromium_through_the_ssh_tunnel(box: Path, tmp_path: Path) -> None:
    from tests.browser import browser

    _, token = url_of(box)
    local = free_port()
    tunnel = subprocess.Popen(
        ["ssh", "-N", "-p", str(SSH_PORT), "-i", str(box / "alice"), "-o", "BatchMode=yes",
         "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
         "-o", "ExitOnForwardFailure=yes", "-L", f"{local}:127.0.0.1:8888", "dev@127.0.0.1"],
    )  # fmt: skip
    try:
        answering(local, token, wait_s=30)  # the tunnel is up and reaches the server
        with browser() as driver:
            driver.get(f"http://127.0.0.1:{local}/lab?token={token}")
            deadline = time.monotonic() + 90
            rows: list[str] = []
            while time.monotonic() < deadline and not rows:
                rows = driver.execute_script(
                    "return Array.from(document.querySelectorAll('.jp-DirListing-item'))"
                    ".map(e => e.textContent.trim());"
                )
                time.sleep(1)
            driver.save_screenshot(str(tmp_path / "lab.png"))
            assert driver.find_elements("css selector", ".jp-FileBrowser"), "no file browser"
            assert rows, "the file browser lists nothing"
    finally:
        tunnel.terminate()
        tunnel.wait(10)


def test_not_reachable_beyond_loopback_nor_without_the_token(box: Path) -> None:
    port, _ = url_of(box)
    bridge = docker("network", "inspect", "bridge", "-f", "{{(index .IPAM.Config 0).Gateway}}")
    address = bridge.stdout.strip()  # this host's address on Docker's bridge: not loopback
    with pytest.raises(OSError), socket.create_connection((address, port), timeout=5):
        pass
    published = docker("port", PROJECT, "8888/tcp").stdout.split()
    assert published == [f"127.0.0.1:{port}"]
    assert http(f"http://127.0.0.1:{port}/api/sessions")[0] == 403
    _, token = url_of(box)  # made at first start, kept on the volume: never in config or image
    assert token not in docker("inspect", "-f", "{{json .Config}}", PROJECT).stdout
    assert token not in (box / ".envkit" / "docker-compose.yml").read_text()
    assert token not in docker("history", "--no-trunc", f"envkit/{PROJECT}:latest").stdout


def test_system_notebook_passes_and_fails_when_the_kernel_is_gone(box: Path) -> None:
    ok = envkit("verify", "--target", f"docker://{PROJECT}", "--only", "system.notebook",
                "--no-history", cwd=box)  # fmt: skip
    assert ok.returncode == 0, ok.stdout + ok.stderr
    spec = f"/usr/local/share/jupyter/kernels/{PROJECT}"
    docker("exec", PROJECT, "mv", spec, "/tmp/kernel-away")
    try:
        bad = envkit("verify", "--target", f"docker://{PROJECT}", "--only", "system.notebook",
                     "--no-history", cwd=box)  # fmt: skip
    finally:
        docker("exec", PROJECT, "mv", "/tmp/kernel-away", spec)
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "did not run" in bad.stdout


def test_the_shared_token_rotates_when_the_members_change(box: Path) -> None:
    _, before = url_of(box)
    config = box / "envkit.yaml"
    original = config.read_text()
    bob = keypair(box, "bob")
    config.write_text(original + f"    - name: bob\n      keys: ['{bob}']\n")
    try:
        up = envkit("up", cwd=box)
        assert up.returncode == 0, up.stdout + up.stderr
        assert "notebook token was rotated" in up.stdout
        port, after = url_of(box)
        assert after != before
        assert answering(port, after) == 200
        assert http(f"http://127.0.0.1:{port}/api/status", before)[0] == 403
    finally:
        config.write_text(original)
        envkit("up", cwd=box)


def test_per_member_servers_come_and_go_with_the_members(box: Path, tmp_path: Path) -> None:
    project = "envkit-nbteam"
    docker("tag", f"envkit/{PROJECT}:latest", f"envkit/{project}:latest")
    copy_project(box, tmp_path)  # the config, the test key, the host's CA files
    keys = {m: keypair(tmp_path, m) for m in ("carol", "dave", "erin")}
    base = (box / "envkit.yaml").read_text().split("team:")[0]
    base = base.replace(f"name: {PROJECT}", f"name: {project}").replace(
        f"port: {SSH_PORT}", f"port: {port(19100)}"
    )

    def members(*names: str) -> None:
        entries = "".join(f"    - name: {n}\n      keys: ['{keys[n]}']\n" for n in names)
        (tmp_path / "envkit.yaml").write_text(
            base + "team:\n  mode: per-member\n  members:\n" + entries
        )
        up = envkit("up", cwd=tmp_path)
        assert up.returncode == 0, up.stdout + up.stderr

    try:
        members("carol", "dave")
        first_port, first_token = url_of(tmp_path, "--member", "carol")
        leaving_port, leaving_token = url_of(tmp_path, "--member", "dave")
        assert first_port != leaving_port and first_token != leaving_token
        assert (
            answering(first_port, first_token) == 200
            and answering(leaving_port, leaving_token) == 200
        )
        assert http(f"http://127.0.0.1:{first_port}/api/status", leaving_token)[0] == 403
        started = docker("inspect", "-f", "{{.State.StartedAt}}", f"{project}-carol").stdout
        members("carol", "erin")  # dave leaves, erin joins
        joining_port, joining_token = url_of(tmp_path, "--member", "erin")
        assert answering(joining_port, joining_token) == 200
        with pytest.raises(OSError):
            http(f"http://127.0.0.1:{leaving_port}/api/status", leaving_token)
        assert docker("inspect", "-f", "{{.State.StartedAt}}", f"{project}-carol").stdout == started
        assert url_of(tmp_path, "--member", "carol") == (first_port, first_token)
    finally:
        envkit("down", "--volumes", "--yes", cwd=tmp_path)
        docker("rmi", f"envkit/{project}:latest", check=False)
