"""One source per fact. Mirror presets come from catalog/mirrors.yaml alone and target transports
from the registry in envkit/targets alone; these tests fail when a second copy appears or drifts,
and walk through adding a preset the way CONTRIBUTING.md says (a copy of the package, one file
changed, every command sees it)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from envkit.catalog.mirrors import load_presets, preset_names
from envkit.errors import EnvkitError
from envkit.targets import TRANSPORTS, parse_target, usage
from tests.helpers import REPO, envkit

NEW_PRESET = """
  example-mirror:
    title: Example mirror (a test's)
    help: https://mirror.example.org/help
    documented: true
    apt: {base: "https://mirror.example.org", archives: [debian, debian-security, ubuntu]}
    pip: https://mirror.example.org/pypi/simple
    conda:
      base: https://mirror.example.org/anaconda
      default_channels: [main, r]
      cloud: [conda-forge, pytorch]
"""


def _envkit(root: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """envkit from the copy at `root`, nothing of this environment leaking in."""
    env = {"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin", "HOME": str(cwd)}
    return envkit(*args, cwd=cwd, env=env, inherit=False)


def test_adding_a_preset_is_one_data_file(tmp_path: Path) -> None:
    """A copy of envkit whose mirrors.yaml alone gains a preset: compat lists it, the schema
    offers it, init writes it, render uses its URLs."""
    root = tmp_path / "copy"
    shutil.copytree(REPO / "envkit", root / "envkit", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("Dockerfile.j2", "docker-compose.yml.j2"):
        shutil.copy(REPO / name, root / name)
    shutil.copytree(REPO / "templates", root / "templates")
    data = root / "envkit" / "catalog" / "mirrors.yaml"
    text = data.read_text(encoding="utf-8")
    data.write_text(text.replace("presets:\n", "presets:" + NEW_PRESET, 1), encoding="utf-8")
    work = tmp_path / "project"
    (work / ".ssh").mkdir(parents=True)  # the starter authorizes ~/.ssh/id_ed25519.pub
    key = work / ".ssh" / "id_ed25519"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)

    listed = _envkit(root, "compat", "--mirrors", "--json", cwd=work)
    assert "example-mirror" in [row["preset"] for row in json.loads(listed.stdout)], listed.stderr
    schema = json.loads(_envkit(root, "schema", cwd=work).stdout)
    assert "example-mirror" in schema["$defs"]["Mirrors"]["properties"]["preset"]["enum"]
    made = _envkit(root, "init", "--preset", "example-mirror", cwd=work)
    assert made.returncode == 0, made.stderr
    rendered = _envkit(root, "render", cwd=work)
    assert rendered.returncode == 0, rendered.stderr
    pip_conf = (work / ".envkit" / "envkit" / "pip.conf").read_text(encoding="utf-8")
    assert "https://mirror.example.org/pypi/simple" in pip_conf


def test_the_schema_compat_and_the_loader_agree_on_presets() -> None:
    from envkit.config.model import Spec

    schema = Spec.model_json_schema()
    assert schema["$defs"]["Mirrors"]["properties"]["preset"]["enum"] == list(preset_names())
    assert tuple(load_presets()) == preset_names()
    model = (REPO / "envkit" / "config" / "model.py").read_text(encoding="utf-8")
    # a hand-written list of names beside the catalogue would be a second source
    assert not re.search(r'"tuna",\s*"bfsu"', model)


def test_every_transport_is_in_the_help_and_the_errors() -> None:
    from typer.testing import CliRunner

    from envkit.cli.registry import build_app

    app = build_app()

    shown = " ".join(CliRunner().invoke(app, ["verify", "--help"]).output.split())
    text = re.sub(r"[│╭╮╰╯─ ]+", " ", shown)
    with pytest.raises(EnvkitError) as refused:
        parse_target("ftp://host")
    for transport in TRANSPORTS.values():
        assert transport.usage in usage()
        assert transport.usage in (refused.value.fix or "")
        assert f"{transport.scheme}://" in text


def test_one_parser_refuses_each_malformed_kind() -> None:
    for bad in ("docker://", "image://", "ssh://host-without-user", "ssh://dev@h:port", "x"):
        with pytest.raises(EnvkitError, match="is not a target"):
            parse_target(bad)
    assert parse_target("ssh://dev@gpu-1:2222").transport is TRANSPORTS["ssh"]
    assert parse_target("image://envkit/x:latest").rest == "envkit/x:latest"


def test_no_module_spells_a_scheme_list_of_its_own() -> None:
    """Messages listing the transports are built from the registry, never written out again."""
    for path in (REPO / "envkit").rglob("*.py"):
        if path.parent.name == "targets" and path.name == "__init__.py":
            continue
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"docker://\w*[^\"']*\bor ssh://", text), path


def test_adding_a_transport_is_one_registry_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    """CONTRIBUTING.md's walk-through: a transport registered once is accepted by the parser,
    offered in every message, and runs the real suite (here: the local transport's code under
    a new scheme, on the system Python with Debian's CPU torch)."""
    from envkit.targets import Transport, open_target
    from envkit.targets.local import LocalTarget
    from envkit.verify.resolve import VerifySettings
    from envkit.verify.run import run_on_target

    loopback = Transport(
        "loopback", "loopback://", False, True, lambda rest: None, lambda u, o: LocalTarget(u.url)
    )
    monkeypatch.setitem(TRANSPORTS, "loopback", loopback)
    assert "loopback://" in usage()
    with pytest.raises(EnvkitError) as refused:
        parse_target("nope://x")
    assert "loopback://" in (refused.value.fix or "")
    target = open_target("loopback://")
    try:
        settings = VerifySettings(only=("tensor.creation",), bench=False)
        report = run_on_target(target, settings, "/usr/bin/python3", timeout=300)
    finally:
        target.close()
    assert report["target"] == "loopback://"
    assert [(c["id"], c["status"]) for c in report["checks"]] == [("tensor.creation", "pass")]


# Run-time defaults and the one module that spells each: a distinctive literal (found by value),
# or a named constant (found by its definition; other modules refer to it by name).
LITERAL_HOME = {("slurm.time", "30:00"): "envkit/config/model.py"}
NAMED_HOME = {
    "SUITE_TIMEOUT_S_INT": "envkit/verify/request.py",  # a target's suite, k8s's deadline
    "DEFAULT_PARALLEL": "envkit/verify/request.py",  # targets verified at once
    "DEFAULT_TIMEOUT_S": "envkit/checks/programs/health.py",  # the health watchdog
    "SPREAD": "envkit/checks/suite/bench.py",  # one GPU below the node's others
    "DEFAULT_THRESHOLDS": "envkit/checks/core/contract.py",  # each bench's fraction of peak
}


def _sources() -> dict[str, str]:
    return {
        str(p.relative_to(REPO)): p.read_text(encoding="utf-8")
        for p in sorted((REPO / "envkit").rglob("*.py"))
    }


def test_no_run_time_default_is_spelled_in_two_modules() -> None:
    import ast

    sources = _sources()
    for (setting, value), home in LITERAL_HOME.items():
        spelled = [
            path
            for path, text in sources.items()
            if any(
                isinstance(n, ast.Constant) and n.value == value for n in ast.walk(ast.parse(text))
            )
        ]
        assert spelled == [home], f"{setting} ({value!r}) is spelled in {spelled}"
    for name, home in NAMED_HOME.items():
        defined = [
            path
            for path, text in sources.items()
            if re.search(rf"^{name}(: [^=]+)? = ", text, re.M)
        ]
        assert defined == [home], f"{name} is defined in {defined}"


def test_the_runners_settings_are_the_contracts_keys_and_json() -> None:
    """runner_config is made from VerifySettings' own fields: each must be a key the runner's
    contract (RunnerConfig) reads, under its own name, and the whole must travel as JSON."""
    from envkit.checks.core.contract import RunnerConfig
    from envkit.verify.resolve import VerifySettings

    made = VerifySettings(only=("cuda.runtime",)).runner_config("docker://box", "/tmp/checks")
    assert set(made) <= set(RunnerConfig.__annotations__), set(made) - set(
        RunnerConfig.__annotations__
    )
    assert made["target"] == "docker://box" and made["user_checks_dir"] == "/tmp/checks"
    assert made["only"] == ["cuda.runtime"]
    assert json.loads(json.dumps(made)) == made
