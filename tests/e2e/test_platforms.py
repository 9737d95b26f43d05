"""One environment for x86 and Grace nodes, on this x86 engine: the CPU project built for
linux/amd64 and linux/arm64 (arm64 under QEMU's user-mode emulation, registered for the test),
pushed to a real registry (Debian's docker-registry) as one index under one inputs tag, the
index read back through the registry's API, the arm64 image pulled back by platform and
verified under emulation. The base is the tests' own multi-arch index (tests/e2e/arm64.py)."""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.arm64 import (
    MANIFEST_LIST,
    RegistryApi,
    ensure_arm64_base,
    multi_arch_base,
    qemu_aarch64,
)
from tests.e2e.images import BASE_IMAGE, E2E_NAME, docker, ensure_base_image, project_config
from tests.e2e.registry import Registry, running_registry
from tests.helpers import envkit

PLATFORMS = "platforms: [linux/amd64, linux/arm64]\n"
PROJECT = "envkit-platforms"  # not the session image's name: its tags are this test's own
LOCAL = f"envkit/{PROJECT}:latest"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Registry, str]]:
    """The emulator, a registry, and the two-platform base in it. (The arm64 base made beside
    the other worker's amd64 one ran past import_rootfs' 30 minutes on a loaded 2-core
    machine: one base at a time.)"""
    ensure_base_image()
    with qemu_aarch64():
        ensure_arm64_base()
        with running_registry(tmp_path_factory.mktemp("registry")) as registry:
            yield registry, multi_arch_base(registry, registry.env())


def _arch(image: str) -> str:
    return docker("image", "inspect", "-f", "{{.Architecture}}", image).stdout.strip()


def test_two_platforms_build_push_as_one_index_and_the_arm64_image_verifies_under_emulation(
    world: tuple[Registry, str], tmp_path: Path
) -> None:
    registry, base = world
    env = registry.env()
    config = project_config(tmp_path, PLATFORMS + f"registry: {registry.address}/team\n")
    text = config.read_text().replace(f"image: {BASE_IMAGE}", f"image: {base}")
    # Not pytest and git, which only the amd64 base has: installing them under the emulator
    # (perl, pytest's byte-compiling) costs minutes; jq still makes apt install under it. Not
    # Debian's torch either: each base has its own (the arm64 one PyPI's, tests/e2e/arm64.py),
    # as the real multi-arch GPU bases carry each architecture's own build.
    text = text.replace("python3-torch, python3-numpy, python3-pytest, git, jq", "jq")
    config.write_text(text.replace(f"name: {E2E_NAME}", f"name: {PROJECT}"))
    shared = f"{registry.address}/team/{PROJECT}"
    pulled: list[str] = []
    try:
        built = envkit("build", "--build", "--progress", "plain", cwd=tmp_path, env=env)
        assert built.returncode == 0, built.stdout[-4000:] + built.stderr[-3000:]
        assert "for linux/arm64" in built.stdout and "for linux/amd64" in built.stdout
        # Each platform's image, by its own tag; the engine's own is also the project's.
        assert _arch(f"{LOCAL}-amd64") == "amd64" and _arch(f"{LOCAL}-arm64") == "arm64"
        assert _arch(LOCAL) == "amd64"
        uname = docker("run", "--rm", f"{LOCAL}-arm64", "uname", "-m").stdout.strip()
        assert uname == "aarch64", "the arm64 image's own programs, through the emulator"

        pushed = envkit("push", cwd=tmp_path, env=env)
        assert pushed.returncode == 0, pushed.stdout[-3000:] + pushed.stderr[-3000:]
        found = re.search(r"pushed (\S+):(ctx-[0-9a-f]{24})", pushed.stdout)
        assert found and found.group(1) == shared, pushed.stdout
        tag = found.group(2)

        # The registry holds one index under the inputs tag (and latest), naming each
        # platform's manifest, which is that platform's per-platform tag.
        api = RegistryApi(registry)
        entries: list[Any] = []
        for ref in (tag, "latest"):
            index = api.manifest(f"team/{PROJECT}", ref, accept=MANIFEST_LIST)
            assert index["mediaType"] == MANIFEST_LIST, index
            found_entries = index["manifests"]
            assert isinstance(found_entries, list)
            entries = found_entries
            platforms = {(e["platform"]["os"], e["platform"]["architecture"]) for e in entries}
            assert platforms == {("linux", "amd64"), ("linux", "arm64")}, entries
        for entry in entries:
            arch = entry["platform"]["architecture"]
            _, headers = api.call(
                "HEAD",
                f"team/{PROJECT}/manifests/{tag}-{arch}",
                headers={"Accept": "application/vnd.docker.distribution.manifest.v2+json"},
            )
            assert headers["Docker-Content-Digest"] == entry["digest"], arch

        # An arm64 host pulls its own image by the same tag: asked for here by platform.
        pulled.append(f"{shared}:{tag}")
        got = subprocess.run(
            ["docker", "pull", "--platform", "linux/arm64", f"{shared}:{tag}"],
            env={**os.environ, **env},
            capture_output=True,
            text=True,
            check=False,
        )
        assert got.returncode == 0, got.stderr
        assert _arch(f"{shared}:{tag}") == "arm64"
        report = tmp_path / "report.json"
        # The checks that show the arm64 image's own torch at work (a tensor, autograd) and
        # the benchmarks' skip, not the whole suite: under QEMU every check's worker imports
        # torch through the emulator (the full suite took 5 to 10 min here, more in CI), and
        # the rest of the suite runs natively in the other e2e files (DDP's spawned ranks
        # under emulation: tests/checks/test_runner.py). The test waits up to the suite's
        # own deadline, stretched for emulation, not the 15 min a native command gets.
        only = ("tensor.creation", "autograd.seed_examples", "bench")
        verified = envkit(
            "verify",
            "--image",
            f"{shared}:{tag}",
            *(f"--only={check}" for check in only),
            "--json-file",
            str(report),
            cwd=tmp_path,
            timeout=2400,
        )
        target = json.loads(report.read_text())["targets"][0]
        odd = [c for c in target["checks"] if c["status"] not in ("pass", "skip")]
        assert verified.returncode == 0, (odd, verified.stderr[-2000:])
        assert target["environment"]["machine"] == "aarch64"
        # An arm64 image on this amd64 engine runs under QEMU: said, its timeouts stretched,
        # and its benchmarks skipped saying why (their figures would time the emulator).
        notes = target["environment"].get("target_notes", [])
        assert any("runs under emulation: a linux/arm64 image" in n for n in notes), notes
        statuses = {c["id"]: c["status"] for c in target["checks"]}
        assert statuses.get("autograd.seed_examples") == "pass", statuses
        assert statuses.get("tensor.creation") == "pass", statuses
        benches = [c for c in target["checks"] if c["id"].startswith("bench.")]
        assert benches and all(c["status"] == "skip" for c in benches), benches
        assert all("runs under emulation (QEMU)" in c["message"] for c in benches), benches
    finally:
        # The project's tags, and the registry's names push gave the platforms' images.
        named = docker("images", "--format", "{{.Repository}}:{{.Tag}}", shared, check=False)
        for image in (LOCAL, f"{LOCAL}-amd64", f"{LOCAL}-arm64", *pulled, *named.stdout.split()):
            docker("rmi", "-f", image, check=False)
