"""A real CUDA image built here, on a machine with no GPU and no registry: the local Debian base,
torch from the pip index (PyPI's torch is a CUDA build), SSH. Then `envkit verify --image` must
say exactly what is true of it: the CUDA build, its architectures, cuDNN and NCCL, read from the
build; and no driver, a fail where the spec asks for GPUs.

The image is large (about 7 GB, mostly CUDA libraries); it is kept by tag between sessions so a
later `envkit build` is served from the engine's cache instead of downloading it again."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.images import (
    CUDA_IMAGE,
    cuda_project_config,
    docker,
    ensure_base_image,
    newest_pypi_torch,
)
from tests.helpers import envkit

pytestmark = [pytest.mark.docker, pytest.mark.slow]

NEEDS_A_GPU = ("cuda.available", "cuda.device_count", "cuda.cudnn", "cuda.nccl", "autograd.gpu")


@pytest.fixture(scope="module")
def cuda_project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    ensure_base_image()
    project = tmp_path_factory.mktemp("cuda")
    cuda_project_config(project)
    built = envkit("build", "--quiet", cwd=project, timeout=3000)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    yield project
    leftovers = docker("ps", "-aq", "--filter", f"ancestor={CUDA_IMAGE}").stdout.split()
    if leftovers:
        docker("rm", "-f", *leftovers, check=False)
    docker("rmi", "-f", CUDA_IMAGE, check=False)  # 7 GB: a test's own image, not a shared base


def _verify(project: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    out = project / "report.json"
    done = envkit(
        "verify", "--image", CUDA_IMAGE, "--no-bench", "--json-file", str(out), *extra, cwd=project
    )
    report = json.loads(out.read_text())
    assert len(report["targets"]) == 1, done.stdout + done.stderr
    return done.returncode, report["targets"][0]


def _pip_version(package: str) -> str:
    shown = docker(
        "run", "--rm", "--entrypoint", "python", CUDA_IMAGE, "-m", "pip", "show", package
    )
    return next(line.split()[1] for line in shown.stdout.splitlines() if line.startswith("Version"))


def test_verify_image_reports_the_cuda_build_and_fails_for_want_of_a_driver(
    cuda_project: Path,
) -> None:
    code, target = _verify(cuda_project)
    results = {c["id"]: c for c in target["checks"]}
    torch, cuda = newest_pypi_torch()
    env = target["environment"]
    assert code == 1, "GPUs were asked for and none is there: verify must fail"
    # What the build is, read from the build (no driver needed), against the plan.
    assert results["cuda.build"]["status"] == "pass", results["cuda.build"]
    assert env["torch"].split("+")[0] == torch and env["cuda_runtime"] == cuda
    assert {"sm_80", "sm_90"} <= set(env["arch_list"])
    # cuDNN and NCCL as the build reports them, against the nvidia wheels pip installed.
    major = cuda.split(".")[0]
    assert _pip_version(f"nvidia-cudnn-cu{major}").startswith(env["cudnn"] + ".")
    assert _pip_version(f"nvidia-nccl-cu{major}") == env["nccl"]
    # No driver here: each check that needs one fails; none passes, none is skipped.
    assert "no NVIDIA driver is visible" in results["cuda.available"]["message"]
    assert {results[c]["status"] for c in NEEDS_A_GPU} == {"fail"}
    assert env["driver"] is None and env["cuda_available"] is False
    assert "no GPU runtime" in " ".join(env["target_notes"])
    assert results["system.sshd"]["status"] == "pass"  # the image's SSH, hardened


def test_without_a_gpu_demand_the_gpu_checks_skip_and_never_pass(cuda_project: Path) -> None:
    code, target = _verify(cuda_project, "--no-require-gpu")
    results = {c["id"]: c for c in target["checks"]}
    assert code == 0
    assert results["cuda.build"]["status"] == "pass"
    assert {results[c]["status"] for c in NEEDS_A_GPU} == {"skip"}


def test_a_later_pip_install_cannot_swap_the_pinned_torch(cuda_project: Path) -> None:
    torch, _ = newest_pypi_torch()
    other = "2.14.1" if torch != "2.14.1" else "2.13.0"
    tried = docker(
        "run",
        "--rm",
        "--entrypoint",
        "python",
        CUDA_IMAGE,
        "-m",
        "pip",
        "install",
        "--dry-run",
        "--no-deps",
        f"torch=={other}",
        check=False,
    )
    assert tried.returncode != 0
    assert (
        f"torch=={torch}" in tried.stdout + tried.stderr
        or "conflict" in (tried.stdout + tried.stderr).lower()
    )
