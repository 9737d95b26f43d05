"""The CLI as a user meets it: init, render (and --check), compat, schema, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import copy_example, envkit


def test_init_writes_a_valid_starter_and_refuses_to_overwrite(tmp_path: Path) -> None:
    (tmp_path / ".ssh").mkdir()
    first = envkit("init", "--preset", "tuna", "--torch", "2.5.1", "--cuda", "12.4", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    text = (tmp_path / "envkit.yaml").read_text()
    assert "preset: tuna" in text and 'torch: "2.5.1"' in text
    again = envkit("init", cwd=tmp_path)
    assert again.returncode == 2 and "--force" in again.stderr
    assert (tmp_path / "envkit.yaml").read_text() == text
    assert envkit("init", "--force", cwd=tmp_path).returncode == 0


def test_init_refuses_an_impossible_request(tmp_path: Path) -> None:
    result = envkit("init", "--torch", "2.4.1", "--cuda", "11.3", "--flavor", "cuda", cwd=tmp_path)
    assert result.returncode == 2
    assert "choose 11.8, 12.1 or 12.4" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "envkit.yaml").exists()


def test_render_then_check_detects_drift(tmp_path: Path) -> None:
    config = copy_example("pytorch-2-tuna", tmp_path)
    out = tmp_path / "out"
    first = envkit("render", "-c", str(config), "-o", str(out), cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "wrote" in first.stdout and (out / "Dockerfile").is_file()
    second = envkit("render", "-c", str(config), "-o", str(out), cwd=tmp_path)
    assert "0 changed" in second.stdout
    assert (
        envkit("render", "--check", "-c", str(config), "-o", str(out), cwd=tmp_path).returncode == 0
    )
    (out / "envkit" / "pip.conf").write_text("[global]\nindex-url = http://evil/simple\n")
    drift = envkit("render", "--check", "-c", str(config), "-o", str(out), cwd=tmp_path)
    assert drift.returncode == 1 and "pip.conf" in drift.stdout
    assert "evil" in (out / "envkit" / "pip.conf").read_text(), "--check writes nothing"


def test_render_removes_files_no_longer_produced(tmp_path: Path, write_config: object) -> None:
    config = tmp_path / "envkit.yaml"
    config.write_text("name: a\nmirrors: {preset: tuna}\n")
    assert envkit("render", cwd=tmp_path).returncode == 0
    assert (tmp_path / ".envkit/envkit/apt/ubuntu.list").is_file()
    config.write_text("name: a\n")
    result = envkit("render", cwd=tmp_path)
    assert "removed" in result.stdout
    assert not (tmp_path / ".envkit/envkit/apt/ubuntu.list").exists()


def test_bad_config_exits_2_and_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "envkit.yaml").write_text("name: a\nmirrors:\n  preset: tsinghua\n")
    result = envkit("render", cwd=tmp_path)
    assert result.returncode == 2
    assert "envkit.yaml:3: mirrors.preset" in result.stderr and "fix:" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / ".envkit").exists()


def test_config_discovery_order(tmp_path: Path) -> None:
    (tmp_path / "other.yaml").write_text("name: from-env\n")
    result = envkit("render", "-o", "out", cwd=tmp_path, env={"ENVKIT_CONFIG": "other.yaml"})
    assert result.returncode == 0, result.stderr
    assert 'io.envkit.project="from-env"' in (tmp_path / "out" / "Dockerfile").read_text()
    missing = envkit("render", cwd=tmp_path / "out")
    assert missing.returncode == 2 and "envkit init" in missing.stderr


def test_compat_resolves_and_judges_a_driver(tmp_path: Path) -> None:
    result = envkit(
        "compat",
        "--torch",
        "2.4.1",
        "--cuda",
        "12.4",
        "--driver",
        "535.104.05",
        "--json",
        cwd=tmp_path,
    )
    data = json.loads(result.stdout)
    assert data["image"] == "pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime"
    assert data["wheel_index"] == "https://download.pytorch.org/whl/cu124"
    assert data["driver_verdict"] == "compat"
    table = envkit("compat", cwd=tmp_path)
    assert table.returncode == 0 and "1.11.0" in table.stdout
    bad = envkit("compat", "--torch", "2.4.1", "--cuda", "11.3", cwd=tmp_path)
    assert bad.returncode == 2 and "choose" in bad.stderr
    mirrors = json.loads(envkit("compat", "--mirrors", "--json", cwd=tmp_path).stdout)
    assert {m["preset"] for m in mirrors} >= {
        "tuna",
        "bfsu",
        "ustc",
        "aliyun",
        "huaweicloud",
        "sjtu",
        "douban",
    }


def test_schema_is_json_schema_of_the_config(tmp_path: Path) -> None:
    result = envkit("schema", cwd=tmp_path)
    schema = json.loads(result.stdout)
    assert schema["title"] == "envkit.yaml"
    assert schema["additionalProperties"] is False
    assert {"name", "base", "mirrors", "ssh", "runtime", "team", "verify"} <= set(
        schema["properties"]
    )


@pytest.mark.parametrize("args", [["--version"], ["--help"], ["render", "--help"]])
def test_help_and_version(args: list[str], tmp_path: Path) -> None:
    result = envkit(*args, cwd=tmp_path)
    assert result.returncode == 0 and result.stdout


def test_unknown_command_is_a_usage_error(tmp_path: Path) -> None:
    assert envkit("frobnicate", cwd=tmp_path).returncode == 2


def test_an_option_it_does_not_know_is_a_usage_error_that_names_it(tmp_path: Path) -> None:
    done = envkit("init", "--path", "old.yaml", "--no-input", cwd=tmp_path)
    assert done.returncode == 2 and "--path" in done.stderr, done.stderr
    assert not (tmp_path / "old.yaml").exists()


def test_init_writes_where_config_says(tmp_path: Path) -> None:
    done = envkit("init", "-c", "new.yaml", "--no-input", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "new.yaml").is_file() and not (tmp_path / "envkit.yaml").exists()
    assert envkit("render", "-c", "new.yaml", cwd=tmp_path).returncode == 0
