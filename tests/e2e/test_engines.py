"""Engines other than this machine's Docker, all real: Podman's Docker-compatible API service
(build, up, a real SSH login, verify, down of the CPU project), the same Podman reached as a
remote engine over ssh:// through a real sshd (nothing bind-mounted from this machine, keys
copied in through the engine), and a CDI-only host, whose GPU is a CDI spec stand-in (no GPU
here): the request reaches Podman by CDI name and the spec's edits reach the container."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import openssh
from tests.e2e.engines import PodmanEngine, SshEngine, podman_engine, ssh_engine  # noqa: F401
from tests.e2e.images import E2E_NAME, E2E_PORT, copy_project
from tests.helpers import envkit, free_port

pytestmark = [pytest.mark.docker, pytest.mark.slow]
NAME = "envkit-engines"  # one project on both routes: the second build finds the first's layers
CDI_SPEC = Path("/etc/cdi/envkit-test-standin-gpu.yaml")


def _project(project_dir: Path, tmp_path: Path, gpus: str = "none") -> int:
    config = copy_project(project_dir, tmp_path)
    port = free_port()
    config.write_text(
        config.read_text()
        .replace(f"name: {E2E_NAME}", f"name: {NAME}")
        .replace(f"port: {E2E_PORT}", f"port: {port}")
        .replace("gpus: none", f"gpus: {gpus}")
    )
    assert f"port: {port}" in config.read_text() and f"gpus: {gpus}" in config.read_text()
    return port


def _inspect(engine: PodmanEngine, name: str) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(
        engine.podman("container", "inspect", name, check=True).stdout
    )[0]
    return found


def _build_up_verify_down(
    tmp_path: Path, env: dict[str, str], port: int, while_up: Callable[[], None] = lambda: None
) -> str:
    """The flow on one engine (WHILE_UP's own look between verify and down); every step's
    output, for the caller's own assertions."""
    said = []
    try:
        built = envkit("build", cwd=tmp_path, env=env)
        said.append(built.stdout + built.stderr)
        assert built.returncode == 0, said[-1][-3000:]
        assert "the engine is Podman" in built.stdout, built.stdout[:500]
        up = envkit("up", cwd=tmp_path, env=env)
        said.append(up.stdout + up.stderr)
        assert up.returncode == 0 and f"{NAME}: healthy" in up.stdout, said[-1]
        login = openssh(port, tmp_path / "id_test", "id -un")
        assert login.returncode == 0 and login.stdout.strip() == "dev", login.stderr
        verified = envkit(
            "verify", "--target", f"docker://{NAME}", "--no-bench", "--no-history", cwd=tmp_path,
            env=env,
        )  # fmt: skip
        said.append(verified.stdout + verified.stderr)
        assert verified.returncode == 0, said[-1][-3000:]
        assert " 0 failed, 0 errors" in verified.stdout
        while_up()
    finally:
        down = envkit("down", "--volumes", "--yes", cwd=tmp_path, env=env)
        said.append(down.stdout + down.stderr)
    assert down.returncode == 0, said[-1]
    return "\n".join(said)


def test_podman_service_builds_starts_verifies_and_stops_the_cpu_project(
    podman_engine: PodmanEngine,  # noqa: F811
    project_dir: Path,
    tmp_path: Path,
) -> None:
    port = _project(project_dir, tmp_path)
    env = {"DOCKER_HOST": podman_engine.url}
    _build_up_verify_down(tmp_path, env, port)
    assert (
        podman_engine.podman("ps", "-aq", "--filter", f"label=io.envkit.project={NAME}").stdout
        == ""
    )


def test_a_remote_engine_over_ssh_gets_everything_through_the_engine(
    ssh_engine: SshEngine,  # noqa: F811
    podman_engine: PodmanEngine,  # noqa: F811
    project_dir: Path,
    tmp_path: Path,
) -> None:
    port = _project(project_dir, tmp_path)
    env = ssh_engine.env()

    def as_the_engine_sees_it() -> None:
        mounts = _inspect(podman_engine, NAME)["Mounts"]
        assert mounts and all(m["Type"] == "volume" for m in mounts), mounts
        blocks = envkit("ssh-config", cwd=tmp_path, env=env).stdout
        assert "HostName 127.0.0.1" in blocks, blocks

    _build_up_verify_down(tmp_path, env, port, as_the_engine_sees_it)


def test_an_engine_over_ssh_that_does_not_answer_names_ssh_as_the_cause(tmp_path: Path) -> None:
    (tmp_path / "envkit.yaml").write_text("name: demo\n")
    closed = free_port()
    done = envkit(
        "status", cwd=tmp_path, env={"DOCKER_HOST": f"ssh://nobody@127.0.0.1:{closed}"},
        timeout=120,
    )  # fmt: skip
    assert done.returncode == 3, done.stderr
    assert f"ssh://nobody@127.0.0.1:{closed} (DOCKER_HOST) does not answer" in done.stderr
    assert "`ssh nobody@127.0.0.1 docker version`" in done.stderr
    assert "systemctl start docker" not in done.stderr


@pytest.fixture
def cdi_standin_gpu() -> Iterator[Path]:
    """A CDI spec of kind nvidia.com/gpu whose device `all` sets an environment variable: no
    GPU here, but Podman resolves the name and applies the edits as for a real one."""
    CDI_SPEC.parent.mkdir(parents=True, exist_ok=True)
    CDI_SPEC.write_text(
        'cdiVersion: "0.5.0"\nkind: nvidia.com/gpu\ndevices:\n  - name: all\n'
        '    containerEdits:\n      env: ["ENVKIT_CDI_STANDIN=all"]\n'
    )
    try:
        yield CDI_SPEC
    finally:
        CDI_SPEC.unlink(missing_ok=True)


def test_cdi_only_podman_host_gets_cdi_requests_with_a_standin_spec_and_doctor_says_so(
    podman_engine: PodmanEngine,  # noqa: F811
    project_dir: Path,
    tmp_path: Path,
    cdi_standin_gpu: Path,
) -> None:
    _project(project_dir, tmp_path, gpus="all")
    env = {"DOCKER_HOST": podman_engine.url}
    built = envkit("build", cwd=tmp_path, env=env)
    assert built.returncode == 0, built.stderr[-2000:]
    doctor = envkit("doctor", "--json", cwd=tmp_path, env=env)
    findings = {f["check"]: f for f in json.loads(doctor.stdout)["findings"]}
    runtime = findings["nvidia-runtime"]
    assert runtime["status"] == "ok" and "CDI" in runtime["message"], runtime
    assert "nvidia.com/gpu=all" in runtime["message"]
    try:
        up = envkit("up", cwd=tmp_path, env=env)
        assert up.returncode == 0, up.stdout + up.stderr
        seen = podman_engine.podman(
            "exec", NAME, "sh", "-c", "tr '\\0' '\\n' < /proc/1/environ", check=True
        ).stdout
        assert "ENVKIT_CDI_STANDIN=all" in seen, "the CDI device reached the container"
    finally:
        envkit("down", "--volumes", "--yes", cwd=tmp_path, env=env)
    cdi_standin_gpu.unlink()
    refused = envkit("up", cwd=tmp_path, env=env)
    assert refused.returncode != 0 and "no CDI spec on this host" in refused.stderr
    doctor = envkit("doctor", "--json", cwd=tmp_path, env=env)
    findings = {f["check"]: f for f in json.loads(doctor.stdout)["findings"]}
    assert findings["nvidia-runtime"]["status"] == "fail", findings["nvidia-runtime"]
