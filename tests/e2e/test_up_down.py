"""`envkit up` / `status` / `down` on the real engine, through docker-compose and through the SDK
fallback; `envkit ssh-config` blocks work with OpenSSH as written; sshd answers on both loopbacks
(IPv4 and IPv6, the default) and a login lands in the mounted home, as in the seed's box."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.e2e.conftest import ENV_IMAGE, openssh
from tests.e2e.images import E2E_NAME, E2E_PORT, copy_project, docker
from tests.e2e.workers import port as port_of
from tests.helpers import envkit

pytestmark = [pytest.mark.docker, pytest.mark.slow]


@pytest.mark.parametrize("path", ["compose", "sdk"])
def test_up_twice_status_ssh_config_down(
    env_image: str, project_dir: Path, tmp_path: Path, path: str
) -> None:
    copy_project(project_dir, tmp_path)
    name = f"envkit-up-{path}"
    config = tmp_path / "envkit.yaml"
    port = port_of(18830 if path == "compose" else 18831)
    config.write_text(
        config.read_text()
        .replace(f"name: {E2E_NAME}", f"name: {name}")
        .replace(f"port: {E2E_PORT}", f"port: {port}")
        .replace("  bind: 127.0.0.1\n", "")  # the default: both loopbacks
        .replace("  shm_size: 2gb\n", '  shm_size: 2gb\n  volumes: ["$HOME:$HOME"]\n')
    )
    docker("tag", ENV_IMAGE, f"envkit/{name}:latest")
    home = tmp_path / "home"  # the seed's `$HOME:$HOME`, with a HOME of the test's own
    home.mkdir()
    env = {"HOME": str(home), **({"ENVKIT_COMPOSE": "sdk"} if path == "sdk" else {})}
    try:
        first = envkit("up", cwd=tmp_path, env=env)
        assert first.returncode == 0, first.stdout + first.stderr
        assert f"{name}: healthy" in first.stdout and f"ssh -p {port} dev@localhost" in first.stdout
        container_id = docker("inspect", "-f", "{{.Id}}", name).stdout
        again = envkit("up", cwd=tmp_path, env=env)
        assert (
            again.returncode == 0
            and docker("inspect", "-f", "{{.Id}}", name).stdout == container_id
        )
        shm = docker("inspect", "-f", "{{.HostConfig.ShmSize}}", name).stdout.strip()
        assert shm == str(2 * 1024**3), "runtime.shm_size reached the container"
        status = envkit("status", cwd=tmp_path, env=env)
        assert f"{name}: running (healthy) 127.0.0.1:{port}->22/tcp" in status.stdout
        assert f"[::1]:{port}->22/tcp" in status.stdout, status.stdout
        for address in ("127.0.0.1", "::1"):
            landed = openssh(port, tmp_path / "id_test", "pwd; echo ~", host=address)
            assert landed.returncode == 0, f"{address}: {landed.stderr}"
            assert landed.stdout.split() == [str(home)] * 2, f"{address}: {landed.stdout}"
        blocks = envkit("ssh-config", "--identity", str(tmp_path / "id_test"), cwd=tmp_path).stdout
        (tmp_path / "ssh_config").write_text(
            blocks + f"    UserKnownHostsFile {tmp_path / 'known'}\n"
        )
        login = subprocess.run(
            ["ssh", "-F", str(tmp_path / "ssh_config"), "-o", "BatchMode=yes", name, "id -un"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert login.returncode == 0 and login.stdout.strip() == "dev", login.stderr
        down = envkit("down", cwd=tmp_path, env=env)
        assert down.returncode == 0 and "are kept" in down.stdout
        assert (
            docker("ps", "-aq", "--filter", f"label=io.envkit.project={name}").stdout.strip() == ""
        )
        volumes = docker("volume", "ls", "-q", "--filter", f"label=io.envkit.project={name}").stdout
        assert volumes.strip(), "down keeps the host-key volume unless --volumes"
    finally:
        envkit("down", "--volumes", "--yes", cwd=tmp_path, env=env)
        docker("rmi", f"envkit/{name}:latest", check=False)


def test_failed_build_exits_4_with_step_and_hint(
    env_image: str, project_dir: Path, tmp_path: Path
) -> None:
    copy_project(project_dir, tmp_path)
    config = tmp_path / "envkit.yaml"
    config.write_text(
        config.read_text().replace("pip: [tqdm]", "pip: [tqdm, envkit-no-such-dist-xyz]")
    )
    done = envkit("build", "--tag", "envkit-test/failing:latest", cwd=tmp_path)
    assert done.returncode == 4
    # the default installer is uv; the failing step is the user's pip step, named as written
    assert "the build failed at step" in done.stderr and "uv pip install" in done.stderr
    assert "the index has no envkit-no-such-dist-xyz" in done.stderr
    assert docker("image", "inspect", "envkit-test/failing:latest", check=False).returncode != 0
