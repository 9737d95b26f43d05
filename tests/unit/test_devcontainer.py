"""`.devcontainer/devcontainer.json`, written beside envkit.yaml by `envkit render`: valid under
the Dev Containers spec's own JSON Schema (tests/data/devcontainer, source noted there), pointing
at the compose service envkit rendered, never inside the build context, and never overwriting a
devcontainer.json the user wrote."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from tests.helpers import EXAMPLE_NAMES, REPO, copy_example, envkit

SCHEMA = json.loads(
    (REPO / "tests" / "data" / "devcontainer" / "devContainer.base.schema.json").read_text()
)
VALIDATOR = jsonschema.Draft201909Validator(SCHEMA)


def jsonc(path: Path) -> Any:
    """devcontainer.json is JSONC; envkit's only comments are whole `//` lines."""
    text = path.read_text(encoding="utf-8")
    return json.loads("\n".join(ln for ln in text.splitlines() if not ln.lstrip().startswith("//")))


def test_the_schema_is_strict_enough_to_fail() -> None:
    """runArgs is for image/Dockerfile configs only; a compose config with it is refused, as is
    a config without workspaceFolder. So a pass below means something."""
    good = {"dockerComposeFile": ["c.yml"], "service": "s", "workspaceFolder": "/w"}
    assert VALIDATOR.is_valid(good)
    assert not VALIDATOR.is_valid({**good, "runArgs": ["--gpus=all"]})
    assert not VALIDATOR.is_valid({"dockerComposeFile": ["c.yml"], "service": "s", "nope": 1})
    assert not VALIDATOR.is_valid({**good, "hostRequirements": {"gpu": "always"}})


@pytest.mark.parametrize("example", EXAMPLE_NAMES)
def test_every_example_writes_a_valid_devcontainer_outside_the_context(
    example: str, tmp_path: Path
) -> None:
    config = copy_example(example, tmp_path)
    project = config.parent
    done = envkit("render", cwd=project)
    assert done.returncode == 0, done.stderr
    found = sorted(project.glob(".devcontainer/**/devcontainer.json"))
    assert found, "no devcontainer.json written"
    compose = yaml.safe_load((project / ".envkit" / "docker-compose.yml").read_text())
    for path in found:
        document = jsonc(path)
        errors = [e.message for e in VALIDATOR.iter_errors(document)]
        assert not errors, f"{path}: {errors}"
        [compose_file] = document["dockerComposeFile"]
        assert (path.parent / compose_file).resolve() == project / ".envkit" / "docker-compose.yml"
        assert document["service"] in compose["services"]
        assert document["runServices"] == [document["service"]]
        service = compose["services"][document["service"]]
        assert document["remoteUser"] == service["environment"]["ENVKIT_USER"]
        wants_gpu = "deploy" in service
        assert ("hostRequirements" in document) == wants_gpu
    context = {
        p.relative_to(project / ".envkit").as_posix() for p in (project / ".envkit").rglob("*")
    }
    assert not any("devcontainer" in rel for rel in context), "editor config in the build context"
    manifest = (project / ".envkit" / ".envkit-files").read_text().split()
    assert not any("devcontainer" in rel for rel in manifest)
    check = envkit("render", "--check", cwd=project)
    assert check.returncode == 0, check.stdout + check.stderr


def test_out_elsewhere_points_the_devcontainer_at_it(tmp_path: Path) -> None:
    config = copy_example("pytorch-2-tuna", tmp_path)
    out = tmp_path / "context"
    assert envkit("render", "-c", str(config), "-o", str(out), cwd=tmp_path).returncode == 0
    path = config.parent / ".devcontainer" / "devcontainer.json"
    [compose_file] = jsonc(path)["dockerComposeFile"]
    assert (path.parent / compose_file).resolve() == out / "docker-compose.yml"
    assert not (out / ".devcontainer").exists()


def test_a_users_own_devcontainer_is_left_alone(tmp_path: Path) -> None:
    config = copy_example("debian-bookworm-cpu", tmp_path)
    mine = config.parent / ".devcontainer" / "devcontainer.json"
    mine.parent.mkdir()
    mine.write_text('{"image": "mine:latest"}\n')
    done = envkit("render", cwd=config.parent)
    assert done.returncode == 0, done.stderr
    assert mine.read_text() == '{"image": "mine:latest"}\n'
    assert "not written by envkit" in done.stderr
    assert envkit("render", "--check", cwd=config.parent).returncode == 0


def test_a_member_who_leaves_loses_their_devcontainer(tmp_path: Path) -> None:
    config = copy_example("team-of-three", tmp_path)
    project = config.parent
    assert envkit("render", cwd=project).returncode == 0
    assert (project / ".devcontainer" / "carol" / "devcontainer.json").is_file()
    spec = yaml.safe_load(config.read_text())
    spec["team"]["members"] = [m for m in spec["team"]["members"] if m["name"] != "carol"]
    config.write_text(yaml.safe_dump(spec))
    check = envkit("render", "--check", cwd=project)
    assert check.returncode == 1 and "carol/devcontainer.json" in check.stdout
    done = envkit("render", cwd=project)
    assert "removed" in done.stdout and "carol" in done.stdout
    assert not (project / ".devcontainer" / "carol").exists()
    assert (project / ".devcontainer" / "alice" / "devcontainer.json").is_file()
