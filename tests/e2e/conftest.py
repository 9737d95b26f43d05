"""Session fixtures for tests on the real Docker engine: the base image, an envkit image built
from the real templates, and containers that are labelled and removed afterwards."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.e2e.images import (
    E2E_NAME,
    TEST_LABEL,
    copy_project,
    docker,
    ensure_base_image,
    project_config,
)
from tests.helpers import envkit

ENV_IMAGE = f"envkit/{E2E_NAME}:latest"  # plan.image.tag of the e2e project
CLASSIC_TAG = f"envkit-test/classic-e2e:{E2E_NAME}"  # the same project by the classic builder
# `python -m envkit` that takes Ctrl-C even where a background parent ignores SIGINT (a shell
# starting a job with `&` makes its children ignore it, and they inherit that).
INTERRUPTIBLE_ENVKIT = [
    sys.executable,
    "-c",
    "import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "sys.argv[0] = 'envkit'; from envkit.cli import main; main()",
]


@pytest.fixture(scope="session")
def project_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("project")
    project_config(directory)
    return directory


@pytest.fixture(scope="session")
def env_image(project_dir: Path) -> Iterator[str]:
    """The e2e project's image, built by `envkit build` (the docker SDK path) from the real
    templates on the local base image."""
    ensure_base_image()
    built = envkit("build", "--quiet", cwd=project_dir)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    yield ENV_IMAGE
    docker("rmi", "-f", ENV_IMAGE, check=False)


# The files that take longest, first (measured 2026-11-30 from an empty engine, two workers,
# 132 passed in 58 min: platforms 1134 s, real_projects 924 s, conda_build 687 s, bundle 549 s,
# team 489 s, member_data 441 s, byo_project 377 s, then the rest). xdist's
# `--dist loadfile --no-loadscope-reorder` hands each worker whole files in collection order, so
# the long ones start at once and both workers end close together instead of one waiting
# alone on a long file at the end. Only the order depends on this list.
LONGEST_FIRST = (
    "test_platforms.py",
    "test_real_projects.py",
    "test_conda_build.py",
    "test_bundle.py",
    "test_team.py",
    "test_member_data.py",
    "test_byo_project.py",
    "test_cuda_image.py",
    "test_builders.py",
    "test_engines.py",
    "test_notebook.py",
    "test_registry.py",
    "test_build.py",
    "test_lock.py",
    "test_fleet.py",
    "test_doctor.py",
    "test_verify_faults.py",
)


def pytest_configure(config: pytest.Config) -> None:
    """Files keep names and ports of their own only while each runs whole on one worker."""
    dist = getattr(config.option, "dist", "no")
    if dist not in ("no", "loadfile"):
        raise pytest.UsageError(
            f"tests/e2e runs with --dist loadfile (each file whole on one worker), not {dist}: "
            "`make test` passes it"
        )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: place for place, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: a file stays whole


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Layers left untagged by builds that failed or were interrupted on purpose, removed once
    the whole run is over: in the plain run, or in xdist's controller after every worker ended
    (a worker removing them could take the layer another worker's build has just made). Every
    image built on the test base inherits its label, so these are certainly the tests' own."""
    if hasattr(session.config, "workerinput") or shutil.which("docker") is None:
        return
    listed = docker(
        "images", "-q", "--filter", "dangling=true", "--filter", f"label={TEST_LABEL}",
        check=False,
    )  # fmt: skip
    if listed.stdout.split():
        docker("rmi", *listed.stdout.split(), check=False)


@pytest.fixture(scope="session")
def classic_image(
    env_image: str, project_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """The e2e project built by `auto` where the Docker CLI is not on PATH: the SDK's classic
    builder, which needs no CLI. Once per session, kept to its end: the classic builder's cache
    is the image's own layers, so every later classic build of this project (a key change, a
    locked build) starts from them instead of from nothing."""
    directory = tmp_path_factory.mktemp("classic")
    copy_project(project_dir, directory)
    empty = tmp_path_factory.mktemp("no-docker-cli")
    built = envkit("build", "--tag", CLASSIC_TAG, cwd=directory, env={"PATH": str(empty)})
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    assert "builder: the classic builder: the Docker CLI here has no buildx" in built.stdout
    assert f"tagged {CLASSIC_TAG} (built by classic)" in built.stdout
    assert "/Dockerfile.classic" in built.stdout
    yield CLASSIC_TAG
    docker("rmi", "-f", CLASSIC_TAG, check=False)


StartContainer = Callable[..., str]


@pytest.fixture
def start_container(project_dir: Path) -> Iterator[StartContainer]:
    started: list[str] = []

    def start(image: str, *, shm: str = "2g", publish_ssh: bool = False) -> str:
        name = f"envkit-test-{uuid.uuid4().hex[:8]}"
        args = [
            "run",
            "-d",
            "--name",
            name,
            "--label",
            f"{TEST_LABEL}=container",
            "--shm-size",
            shm,
            "-e",
            "ENVKIT_USER=dev",
            "-e",
            "ENVKIT_UID=1000",
            "-e",
            "ENVKIT_GID=1000",
            "-v",
            f"{project_dir / '.envkit' / 'keys' / E2E_NAME}:/run/envkit/keys:ro",
        ]
        if publish_ssh:
            args += ["-p", "127.0.0.1::22"]
        docker(*args, image)
        started.append(name)
        _wait_healthy(name)
        return name

    yield start
    for name in started:
        docker("rm", "-f", name, check=False)


def _wait_healthy(name: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        probe = docker("exec", name, "/usr/local/bin/envkit-healthcheck", check=False)
        if probe.returncode == 0:
            return
        time.sleep(0.5)
    logs = docker("logs", name, check=False)
    raise AssertionError(f"{name} never became healthy: {logs.stdout[-800:]} {logs.stderr[-800:]}")


def ssh_port(name: str) -> int:
    out = docker("port", name, "22/tcp").stdout.strip().splitlines()[0]
    return int(out.rsplit(":", 1)[1])


def openssh(
    port: int, key: Path, command: str, user: str = "dev", host: str = "127.0.0.1"
) -> subprocess.CompletedProcess[str]:
    """Run `command` over a real OpenSSH login with one key and nothing else offered."""
    return subprocess.run(
        [
            "ssh",
            "-p",
            str(port),
            "-i",
            str(key),
            "-o",
            "BatchMode=yes",
            "-o",
            "StrictHostKeyChecking=no",
            "-o",
            "UserKnownHostsFile=/dev/null",
            "-o",
            "IdentitiesOnly=yes",
            f"{user}@{host}",
            command,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
