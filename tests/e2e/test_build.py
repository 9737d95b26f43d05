"""`envkit build` on the real engine: mirrors proven by what local mirrors served, the layer cache
(a key change rebuilds nothing; a pip change rebuilds only from the pip step), and the errors a
user meets (engine unreachable, image missing, port taken, Ctrl-C mid-build)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import ENV_IMAGE, INTERRUPTIBLE_ENVKIT
from tests.e2e.images import BASE_IMAGE, E2E_NAME, copy_project, docker, ensure_base_image
from tests.e2e.mirrors import PROBE, Recorder, apt_proxy, pip_index
from tests.helpers import envkit

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def _events(output: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in output.splitlines() if line.startswith("{")]


def _rebuilt_steps(events: list[dict[str, Any]]) -> list[str]:
    """Instructions that ran instead of coming from the cache (FROM is never 'cached')."""
    steps = {e["step"]: e["instruction"] for e in events if e["event"] == "step"}
    cached = {e["step"] for e in events if e["event"] == "step_done" and e["cached"]}
    return [text for step, text in sorted(steps.items()) if step not in cached and step != 1]


def test_packages_come_from_the_configured_mirrors_and_buildkit_fetches_each_once(
    tmp_path: Path, project_dir: Path
) -> None:
    """Every apt and pip download (uv's own included) goes to the configured mirrors; then, on
    BuildKit, a one-line apt change that reruns every later layer downloads nothing the first
    build already fetched: apt's archives and uv's wheels come from the cache mounts."""
    ensure_base_image()
    config = copy_project(project_dir, tmp_path)
    pip_seen, apt_seen = Recorder(), Recorder()
    tag = "envkit/envkit-mirror-e2e:latest"
    # BuildKit keeps apt's caches per base image: a base tag of this run's own starts them empty
    # (an earlier run's cached tree package would otherwise never reach the mirror).
    base = f"envkit-test/mirror-{uuid.uuid4().hex[:8]}:bookworm"
    docker("tag", BASE_IMAGE, base)
    with pip_index(pip_seen) as pip_url, apt_proxy(apt_seen) as apt_url:
        text = config.read_text()
        text = text.replace(f"name: {E2E_NAME}", "name: envkit-mirror-e2e")
        text = text.replace(f"image: {BASE_IMAGE}", f"image: {base}")
        text = text.replace(
            "  preset: official\n",
            f"  preset: official\n  apt: {apt_url}\n  pip: {pip_url}/simple\n"
            "  trusted_hosts: [127.0.0.1]\n",  # a plain-http index on this host: opted in
        )
        # tree and pv: small, not in the base, and (unlike jq) without a bookworm-security
        # update, which would come from the official security host as configured.
        text = text.replace("apt: [python3-torch,", "apt: [tree, python3-torch,")
        text = text.replace("pip: [tqdm]", "pip: [envkit-probe]")
        text = text.replace("runtime:\n", "runtime:\n  build_network: host\n")
        config.write_text(text)
        built = envkit("build", "--quiet", "--builder", "buildkit", cwd=tmp_path)
        assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
        first_pip, first_apt = list(pip_seen.paths), list(apt_seen.paths)
        config.write_text(text.replace("apt: [tree,", "apt: [tree, pv,"))
        again = envkit("build", "--json", "--builder", "buildkit", cwd=tmp_path)
    try:
        assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-2000:]
        assert "/simple/envkit-probe/" in first_pip and f"/packages/{PROBE}" in first_pip
        assert "/simple/uv/" in first_pip, "uv itself comes from the configured index"
        assert any(p.startswith("/debian/dists/bookworm/") for p in first_apt), first_apt[:5]
        pool = [p for p in first_apt if "/pool/" in p]
        assert any(p.startswith("/debian/pool/main/t/tree/tree_") for p in pool), pool
        served = docker(
            "run", "--rm", "--entrypoint", "python", tag,
            "-c", "import envkit_probe; print(envkit_probe.SERVED_BY)",
        )  # fmt: skip
        assert served.stdout.strip() == "envkit-test-index"

        rebuilt = _rebuilt_steps(_events(again.stdout))
        assert any("envkit-probe" in step for step in rebuilt), "the pip layer ran again"
        later_apt = apt_seen.paths[len(first_apt) :]
        assert any("/pool/main/p/pv/pv_" in p for p in later_apt), later_apt
        assert not [p for p in later_apt if "/pool/main/t/tree/" in p], "tree fetched twice"
        later_pip = pip_seen.paths[len(first_pip) :]
        assert f"/packages/{PROBE}" not in later_pip, "the wheel was fetched again"
    finally:
        empty_cache_mounts(tmp_path / ".envkit" / "Dockerfile", base)
        docker("rmi", "-f", tag, base, check=False)


def empty_cache_mounts(dockerfile: Path, base: str) -> None:
    """Empty this run's own BuildKit cache mounts (apt's, named after its base tag): BuildKit has
    no command that removes one cache mount by its id, so a build mounts each and clears it."""
    ids = sorted(set(re.findall(r"id=(envkit-apt-[^,]+),target=([^,]+),", dockerfile.read_text())))
    if not ids:
        return
    mounts = " ".join(f"--mount=type=cache,id={i},target={target}" for i, target in ids)
    clear = " ".join(f"{target}/*" for _, target in ids)
    scratch = dockerfile.parent / "clear"
    scratch.mkdir(exist_ok=True)
    (scratch / "Dockerfile").write_text(f"FROM {base}\nRUN {mounts} rm -rf {clear}\n")
    docker("buildx", "build", "--no-cache", "--progress=quiet", str(scratch), check=False)


def test_key_change_rebuilds_nothing_and_pip_change_only_from_pip(
    env_image: str, tmp_path: Path, project_dir: Path
) -> None:
    """On BuildKit, for real; the classic Dockerfile's steps are held to the same by the cache
    model `build --dry-run` shares with both builders (tests/unit/test_build_progress.py)."""
    builder = "buildkit"
    config = copy_project(project_dir, tmp_path)
    tag = f"envkit-test/cache-{builder}:latest"
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / "id_new")], check=True
    )
    try:
        first = envkit("build", "--json", "--builder", builder, "--tag", tag, cwd=tmp_path)
        assert first.returncode == 0, first.stderr[-2000:]
        assert _events(first.stdout)[0] == {"event": "builder", "builder": builder}
        config.write_text(config.read_text().replace("[id_test.pub]", "[id_test.pub, id_new.pub]"))
        keyed = envkit("build", "--json", "--builder", builder, "--tag", tag, cwd=tmp_path)
        assert keyed.returncode == 0, keyed.stderr[-2000:]
        assert _rebuilt_steps(_events(keyed.stdout)) == [], "adding a key must rebuild no layer"

        # A requirement no earlier build on this engine can have cached (a leftover layer from a
        # benchmark or an earlier run would make the step a cache hit and the test meaningless).
        unique = f"six!=0.0.{uuid.uuid4().int % 10**9}"
        config.write_text(config.read_text().replace("pip: [tqdm]", f"pip: [tqdm, '{unique}']"))
        changed = envkit("build", "--json", "--builder", builder, "--tag", tag, cwd=tmp_path)
        assert changed.returncode == 0, changed.stderr[-2000:]
        events = _events(changed.stdout)
        rebuilt = _rebuilt_steps(events)
        assert rebuilt and "/opt/envkit/uv/bin/uv pip install" in rebuilt[0], (
            rebuilt,
            changed.stdout[-3000:],
        )
        assert unique in rebuilt[0]
        steps = [e["instruction"] for e in events if e["event"] == "step"]
        before = steps[1 : steps.index(rebuilt[0])]
        assert any("apt-get install" in s for s in before), "the apt step is before the pip step"
        cached = {e["step"] for e in events if e["event"] == "step_done" and e["cached"]}
        assert set(range(2, steps.index(rebuilt[0]) + 1)) <= cached, "all before it was cached"
        assert events[-1]["builder"] == builder
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
    config.write_text(config.read_text().replace(f"name: {E2E_NAME}", "name: envkit-never-built"))
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
        config.read_text().replace(f"name: {E2E_NAME}", "name: envkit-ports")
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


@pytest.mark.parametrize("builder", ["buildkit", "classic"])
def test_ctrl_c_during_a_build_leaves_nothing_running(
    env_image: str, tmp_path: Path, project_dir: Path, builder: str
) -> None:
    """No build container (classic), no buildx client still building (BuildKit), no image, no
    half-written file."""
    config = copy_project(project_dir, tmp_path)
    config.write_text(config.read_text().replace("pip: [tqdm]", "pip: [tqdm, six]"))
    proc = subprocess.Popen(
        [
            *INTERRUPTIBLE_ENVKIT,
            "build",
            "--no-cache",
            "--builder",
            builder,
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
    for line in proc.stdout:  # wait until the apt step is under way
        if line.startswith("[") and "RUN" in line and "apt" in line:
            break
    time.sleep(3)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err[-2000:]
    assert "Traceback" not in err
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        left = docker("ps", "-aq", "--filter", f"label=io.envkit.project={E2E_NAME}").stdout.split()
        if not left:
            break
        time.sleep(2)
    assert not left, "the interrupted build left containers behind"
    clients = subprocess.run(
        ["pgrep", "-f", "buildx build.*envkit-test/interrupted"], capture_output=True, check=False
    )
    assert clients.returncode == 1, "a buildx client is still building"
    assert docker("image", "inspect", "envkit-test/interrupted:latest", check=False).returncode != 0
    for path in (tmp_path / ".envkit").rglob("*"):
        assert not path.name.endswith(".tmp"), f"half-written file {path}"


class CuttingProxy:
    """A Unix socket in front of the real engine that forwards everything, but cuts the build's
    answer short after its first bytes: the engine breaking off mid-build, for real. The classic
    builder's build is `POST /build`; BuildKit's runs over the hijacked `/grpc` stream."""

    def __init__(self, path: Path, keep_bytes: int = 400) -> None:
        import threading

        self.path, self.keep = path, keep_bytes
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(str(path))
        self.server.listen(8)
        self.threads: list[threading.Thread] = []
        self.running = True
        self.accepting = threading.Thread(target=self._accept, daemon=True)
        self.accepting.start()

    def _accept(self) -> None:
        import threading

        while self.running:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            thread = threading.Thread(target=self._serve, args=(client,), daemon=True)
            thread.start()
            self.threads.append(thread)

    def _serve(self, client: socket.socket) -> None:
        import threading

        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        upstream.connect("/var/run/docker.sock")
        first = client.recv(65536)
        cut = any(p in first.split(b"\r\n", 1)[0] for p in (b"/build", b"/grpc"))
        upstream.sendall(first)

        def up() -> None:
            with contextlib.suppress(OSError):
                while chunk := client.recv(65536):
                    upstream.sendall(chunk)

        threading.Thread(target=up, daemon=True).start()
        sent = 0
        with contextlib.suppress(OSError):
            while chunk := upstream.recv(65536):
                if cut and sent + len(chunk) > self.keep:
                    client.sendall(chunk[: max(0, self.keep - sent)])
                    break
                client.sendall(chunk)
                sent += len(chunk)
        for end in (client, upstream):
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)
            end.close()

    def close(self) -> None:
        self.running = False
        self.server.close()


@pytest.mark.docker
@pytest.mark.parametrize("builder", ["buildkit", "classic"])
def test_an_engine_that_breaks_off_a_build_is_a_clear_error(
    tmp_path: Path, project_dir: Path, builder: str
) -> None:
    ensure_base_image()
    proxy = CuttingProxy(tmp_path / "docker.sock")
    tag = f"envkit/{E2E_NAME}:cut-{uuid.uuid4().hex[:6]}"
    try:
        done = envkit(
            "build", "--no-cache", "--builder", builder, "--tag", tag, cwd=project_dir,
            env={"DOCKER_HOST": f"unix://{tmp_path / 'docker.sock'}"}, timeout=600,
        )  # fmt: skip
    finally:
        proxy.close()
        docker("rmi", "-f", tag, check=False)
    assert done.returncode == 3, done.stdout[-2000:] + done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    assert "the Docker engine broke off the build" in done.stderr, done.stderr
