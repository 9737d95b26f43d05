"""Which engine envkit talks to (DOCKER_HOST, Docker contexts), what it asks of it (GPU requests
by the engine's GPU path, Podman's own create call), the registry's names and errors, and the
digest that names a build's inputs."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from envkit.engine.classic import follow
from envkit.engine.endpoint import LOCAL_SOCKET, current_endpoint
from envkit.engine.facts import EngineFacts, cdi_gpu_devices, podman_ulimits
from envkit.engine.podman import libpod_spec
from envkit.engine.registry import SharedImage, failure
from envkit.engine.sdk_up import run_options
from envkit.errors import EngineUnreachableError, EnvkitError
from envkit.names import REGISTRY_REPO
from envkit.render.digest import context_digest
from envkit.render.files import render_files
from tests.helpers import plan_example, plan_text


def _context(tmp_path: Path, name: str, host: str) -> Path:
    """A Docker context as the CLI stores it: meta.json under the sha256 of its name."""
    config = tmp_path / "docker"
    meta = config / "contexts" / "meta" / hashlib.sha256(name.encode()).hexdigest()
    meta.mkdir(parents=True)
    (meta / "meta.json").write_text(
        json.dumps({"Name": name, "Endpoints": {"docker": {"Host": host}}})
    )
    return config


def test_docker_host_wins_and_ssh_engines_are_remote(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", "ssh://alice@gpu-server.lab:2222")
    endpoint = current_endpoint()
    assert endpoint.remote and endpoint.host == "gpu-server.lab"
    assert endpoint.ssh_login == "alice@gpu-server.lab" and endpoint.source == "DOCKER_HOST"
    monkeypatch.setenv("DOCKER_HOST", "tcp://127.0.0.1:2375")
    assert not current_endpoint().remote, "loopback tcp is this machine's engine"
    monkeypatch.setenv("DOCKER_HOST", "tcp://10.0.0.7:2376")
    assert current_endpoint().remote and current_endpoint().host == "10.0.0.7"


def test_a_docker_context_is_followed_as_the_cli_follows_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("DOCKER_HOST", raising=False)
    monkeypatch.delenv("DOCKER_CONTEXT", raising=False)
    config = _context(tmp_path, "gpu-server", "ssh://bob@gpu-server")
    monkeypatch.setenv("DOCKER_CONFIG", str(config))
    assert current_endpoint().url == LOCAL_SOCKET, "no current context: the local socket"
    (config / "config.json").write_text(json.dumps({"currentContext": "gpu-server"}))
    endpoint = current_endpoint()
    assert endpoint.url == "ssh://bob@gpu-server" and endpoint.context == "gpu-server"
    monkeypatch.setenv("DOCKER_CONTEXT", "default")
    assert current_endpoint().url == LOCAL_SOCKET, "DOCKER_CONTEXT over config.json"
    monkeypatch.setenv("DOCKER_CONTEXT", "gone")
    with pytest.raises(EnvkitError) as refused:
        current_endpoint()
    assert "'gone'" in refused.value.message and "docker context ls" in (refused.value.fix or "")


@pytest.mark.parametrize(
    "value",
    ["registry.lab.example:5000/nlp", "localhost:5000", "127.0.0.1:5000/team/a-b", "ghcr.io/org"],
)
def test_registries_that_are_registries(value: str) -> None:
    assert REGISTRY_REPO.fullmatch(value)


@pytest.mark.parametrize(
    "value",
    ["my registry", "-oProxyCommand=x", "nlp", "team/nlp", "host.example/Path", "a.b/c;d", ""],
)
def test_registries_that_are_not(value: str) -> None:
    assert not REGISTRY_REPO.fullmatch(value)


def test_the_shared_name_is_the_registry_the_project_and_the_inputs() -> None:
    image = SharedImage.of("reg.lab:5000/nlp/", "vision", "ab" * 32)
    assert image.ref == "reg.lab:5000/nlp/vision:ctx-" + "ab" * 12
    assert (
        image.latest == "reg.lab:5000/nlp/vision:latest" and image.registry_host == "reg.lab:5000"
    )


@pytest.mark.parametrize(
    ("said", "kind", "fix"),
    [
        ("unauthorized: authentication required", EnvkitError, "`docker login reg.lab:5000`"),
        ("http: server gave HTTP response to HTTPS client", EnvkitError, "insecure-registries"),
        ("dial tcp 10.0.0.9:5000: connect: connection refused", EngineUnreachableError, "curl"),
        ("denied: requested access to the resource is denied", EnvkitError, "push rights"),
    ],
)
def test_registry_failures_name_their_fix(said: str, kind: type, fix: str) -> None:
    error = failure(SharedImage.of("reg.lab:5000", "p", "0" * 64), "push", said)
    assert type(error) is kind and fix in (error.fix or "")


def test_the_inputs_digest_follows_the_build_and_only_the_build() -> None:
    files = render_files(plan_example("team-of-three"))
    first = context_digest(files)
    assert context_digest(dict(files)) == first, "the same inputs give the same digest"
    keys = next(p for p in files if p.startswith("keys/"))
    assert context_digest({**files, keys: "ssh-ed25519 AAAA other\n"}) == first
    assert context_digest({**files, "docker-compose.yml": "services: {}\n"}) == first
    assert context_digest({**files, "Dockerfile": files["Dockerfile"] + "\n"}) != first
    assert context_digest(files, {"A": "1"}) != first
    assert context_digest(files, lock_text="x") != first
    other = context_digest(render_files(plan_example("debian-bookworm-cpu")))
    assert other != first


def _facts(podman: bool, runtimes: tuple[str, ...] = (), cdi: tuple[str, ...] = ()) -> EngineFacts:
    from envkit.engine.endpoint import Endpoint

    return EngineFacts(Endpoint(LOCAL_SOCKET, "test"), "engine", podman, runtimes, cdi)


GPU_CONFIG = "name: gpubox\nruntime:\n  gpus: {gpus}\nssh:\n  authorized_keys: ['{key}']\n"
KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHbiSQkQ7TgO9fnD6iTuKT9xKBsMrBPPgcX1pWXm1dnX t@t"


def _options(tmp_path: Path, gpus: str, facts: EngineFacts) -> dict[str, Any]:
    plan = plan_text(GPU_CONFIG.format(gpus=gpus, key=KEY), tmp_path)
    return run_options(plan, plan.services[0], tmp_path, facts)


def test_gpu_requests_follow_the_engines_gpu_path(tmp_path: Path) -> None:
    nvidia = _options(tmp_path, "all", _facts(False, runtimes=("nvidia", "runc")))
    assert nvidia["device_requests"][0]["Driver"] == "nvidia"
    cdi = _options(tmp_path, "2", _facts(False, cdi=("nvidia.com/gpu=all",)))
    assert cdi["device_requests"][0]["Driver"] == "cdi"
    assert cdi["device_requests"][0]["DeviceIDs"] == ["nvidia.com/gpu=0", "nvidia.com/gpu=1"]
    podman = _options(tmp_path, "all", _facts(True, cdi=("nvidia.com/gpu=all",)))
    assert podman["cdi_devices"] == ["nvidia.com/gpu=all"] and "device_requests" not in podman
    with pytest.raises(EnvkitError) as refused:
        _options(tmp_path, "all", _facts(True))
    assert "no CDI spec" in refused.value.message


def test_podmans_own_create_call_carries_every_option(tmp_path: Path) -> None:
    facts = _facts(True, cdi=("nvidia.com/gpu=all",))
    options = _options(tmp_path, "all", facts)
    options["ulimits"] = podman_ulimits(facts)
    spec = libpod_spec("envkit/gpubox:latest", options, options.pop("cdi_devices"))
    assert spec["devices"] == [{"path": "nvidia.com/gpu=all"}]
    assert spec["name"] == "gpubox" and spec["init"] is True
    assert {m["container_port"] for m in spec["portmappings"]} == {22}
    dests = ["/var/lib/envkit/hostkeys", "/home/dev", "/cache"]
    assert [v["Dest"] for v in spec["volumes"]] == dests
    assert (
        spec["mounts"][0]["Destination"] == "/run/envkit/keys"
        and "ro" in spec["mounts"][0]["Options"]
    )
    assert spec["healthconfig"]["Retries"] == 3 and isinstance(spec.get("shm_size"), int)
    assert {r["type"] for r in spec["r_limits"]} == {"nofile", "nproc"}
    assert spec["env"]["ENVKIT_USER"] == options["environment"]["ENVKIT_USER"]


def test_cdi_specs_are_read_as_the_engines_read_them(tmp_path: Path) -> None:
    (tmp_path / "nvidia.yaml").write_text(
        "cdiVersion: 0.5.0\nkind: nvidia.com/gpu\ndevices:\n  - name: '0'\n  - name: all\n"
    )
    (tmp_path / "other.json").write_text(
        json.dumps({"kind": "vendor.com/fpga", "devices": [{"name": "x"}]})
    )
    (tmp_path / "broken.yaml").write_text("kind: [unclosed\n")
    assert cdi_gpu_devices((tmp_path, tmp_path / "absent")) == (
        "nvidia.com/gpu=0",
        "nvidia.com/gpu=all",
    )


def test_buildahs_progress_through_podmans_api_reads_as_steps() -> None:
    # The stream as Podman 4.3's build call sent it here (recorded), cut to its kinds of line.
    stream: list[dict[str, Any]] = [
        {"stream": "STEP 1/3: FROM envkit-probe/debian:bookworm\n"},
        {"stream": "STEP 2/3: RUN apt-get update\n"},
        {"stream": "Get:1 http://deb.debian.org/debian bookworm InRelease [151 kB]\n"},
        {"stream": "--> 7b6cc617c28\n"},
        {"stream": "STEP 3/3: LABEL a=b\n"},
        {"stream": "--> Using cache 4a6f01ca2b5e\n"},
        {"stream": "COMMIT docker.io/probe/x:1\n"},
        {"stream": "Successfully tagged docker.io/probe/x:1\n"},
        {"aux": {"ID": "sha256:" + "2e" * 32}},
        {"stream": "Successfully built 2eca58c789d9\n"},
    ]
    events: list[tuple[str, int, str]] = []
    progress = follow(stream, lambda kind, p, text: events.append((kind, p.step, text)))
    assert [e for e in events if e[0] == "step"] == [
        ("step", 1, "FROM envkit-probe/debian:bookworm"),
        ("step", 2, "RUN apt-get update"),
        ("step", 3, "LABEL a=b"),
    ]
    assert progress.cached == {3} and progress.total == 3
    assert [e[2] for e in events if e[0] == "output"] == [
        "Get:1 http://deb.debian.org/debian bookworm InRelease [151 kB]"
    ]
    assert progress.image_id == "sha256:" + "2e" * 32


def test_pyxis_imports_the_teams_image_from_the_registry_by_its_inputs_tag(
    tmp_path: Path,
) -> None:
    from envkit.commands.verify import _enroot_image, _pyxis_from_registry
    from envkit.services.project import load_project

    config = tmp_path / "envkit.yaml"
    config.write_text(
        f"name: lab\nregistry: reg.lab:5000/nlp\nslurm:\n  runtime: pyxis\n"
        f"ssh:\n  authorized_keys: ['{KEY}']\n"
    )
    project = load_project(str(config))
    assert _pyxis_from_registry(project, project.plan.image.tag)
    image = _enroot_image(project)
    assert image.startswith("reg.lab:5000#nlp/lab:ctx-") and len(image.split(":ctx-")[1]) == 24
    assert not _pyxis_from_registry(project, "nvcr.io#nvidia/pytorch:24.05-py3")


TEAM = (
    "name: lab\nssh:\n  authorized_keys: ['{key}']\nteam:\n  mode: {mode}\n  members:\n"
    "    - name: alice\n      keys: ['{key}']\n      gpus: [0, 1]\n"
    "    - name: bob\n      keys: ['{key}']\n      gpus: {bob}\n"
)


@pytest.mark.parametrize(
    ("mode", "bob", "said"),
    [
        ("per-member", "[1, 2]", "GPU 1 is given to both alice and bob"),
        ("per-member", "all", "must be named or counted"),
        ("shared", "[2]", "needs a container of their own"),
    ],
)
def test_member_gpus_that_cannot_work_are_refused_with_file_and_line(
    tmp_path: Path, mode: str, bob: str, said: str
) -> None:
    from tests.helpers import envkit

    (tmp_path / "envkit.yaml").write_text(TEAM.format(key=KEY, mode=mode, bob=bob))
    done = envkit("render", cwd=tmp_path)
    assert done.returncode == 2 and said in done.stderr, done.stderr
    line = 9 if mode == "shared" else 12  # alice's gpus in shared mode, else bob's
    assert f"envkit.yaml:{line}:" in done.stderr, done.stderr
    assert not (tmp_path / ".envkit").exists(), "a refused config writes nothing"
    if "given to both" in said:
        shared = TEAM.format(key=KEY, mode=mode, bob=bob) + "  share_gpus: true\n"
        (tmp_path / "envkit.yaml").write_text(shared)
        assert envkit("render", cwd=tmp_path).returncode == 0, "sharing said out loud is allowed"
