"""runtime.env values reach SSH sessions through two files the entrypoint writes:
/etc/environment (read by pam_env, and sourced by shells on some systems) and a profile script.
The real entrypoint functions run here under bash on hostile values; then bash and dash source
both files, and every value must arrive byte for byte with nothing executed."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from envkit.config.load import load_text
from envkit.plan import make_plan
from envkit.render.files import render_files
from tests.helpers import TEST_HOST

HOSTILE = {
    "SUBST": "$(touch CANARY)",
    "BACKTICK": "`touch CANARY`",
    "DOLLAR": "$HOME and ${PATH}",
    "BOTH_QUOTES": 'it\'s "$(touch CANARY)"',
    "SINGLE": "it's fine",
    "DOUBLE": 'say "hi"',
    "BACKSLASH": "a\\b\\\\c\\$d",
    "SEMI": "x; touch CANARY; #",
    "SPACES": "  two  spaces  ",
    "EMPTY": "",
    "GLOB": "*",
    "UNICODE": "naïve ✓",
}
FUNCTIONS = ("quote", "environment_line", "export_environment")


def entrypoint_functions() -> str:
    spec = load_text("name: esc\n", "envkit.yaml")
    script = render_files(make_plan(spec, TEST_HOST))["envkit/runtime/entrypoint.sh"]
    found = []
    for name in FUNCTIONS:
        match = re.search(rf"^{name}\(\) \{{.*?^\}}$", script, re.S | re.M) or re.search(
            rf"^{name}\(\) \{{.*\}}$", script, re.M
        )
        assert match, f"entrypoint.sh has no {name}()"
        found.append(match.group(0))
    return "\n".join(found)


def write_files(tmp_path: Path, values: dict[str, str]) -> tuple[Path, Path]:
    """Run the entrypoint's own export_environment with its two targets moved into tmp_path."""
    profile, environment = tmp_path / "profile.sh", tmp_path / "environment"
    functions = (
        entrypoint_functions()
        .replace("/etc/profile.d/00-envkit.sh", str(profile))
        .replace("/etc/environment", str(environment))
    )
    env = {"ENVKIT_ENV_KEYS": " ".join(values), "PATH": "/usr/bin:/bin", **values}
    done = subprocess.run(
        ["bash", "-c", functions + "\nexport_environment"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return profile, environment


def sourced(shell: str, file: Path, names: list[str], cwd: Path) -> dict[str, str]:
    """What `shell` holds for each name after sourcing `file` in a clean environment."""
    show = "; ".join(f"printf '%s\\0' \"${{{name}-<unset>}}\"" for name in names)
    done = subprocess.run(
        [shell, "-c", f". {file}; {show}"],
        env={"PATH": "/usr/bin:/bin"},
        cwd=cwd,
        capture_output=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return dict(zip(names, done.stdout.decode().split("\0")[:-1], strict=True))


@pytest.mark.parametrize("shell", ["bash", "dash"])
def test_hostile_values_arrive_byte_for_byte_and_nothing_runs(tmp_path: Path, shell: str) -> None:
    assert shutil.which(shell), f"{shell} is part of every Debian system"
    profile, environment = write_files(tmp_path, HOSTILE)
    names = list(HOSTILE)
    assert sourced(shell, profile, names, tmp_path) == HOSTILE
    in_environment = sourced(shell, environment, names, tmp_path)
    for name, value in HOSTILE.items():
        assert in_environment[name] in (value, "<unset>"), name
    left_out = {name for name, value in in_environment.items() if value == "<unset>"}
    assert left_out == {"BOTH_QUOTES"}, "only a value with no form both readers share is left out"
    assert not (tmp_path / "CANARY").exists(), "a value was executed"


def test_environment_lines_are_what_pam_env_reads_literally(tmp_path: Path) -> None:
    """pam_env strips the quotes round a value and expands nothing, so each line must be
    NAME='no single quote inside' or NAME="none of \" $ ` \\ inside"."""
    _, environment = write_files(tmp_path, HOSTILE)
    for line in environment.read_text().splitlines():
        assert re.fullmatch(r"[A-Z_]+=('[^']*'|\"[^\"$`\\]*\")", line), line


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    value=st.text(st.characters(min_codepoint=32, max_codepoint=0x2FF, exclude_characters="\x7f"))
)
def test_any_one_line_value_survives_both_shells(tmp_path: Path, value: str) -> None:
    for old in tmp_path.iterdir():
        old.unlink()
    profile, environment = write_files(tmp_path, {"V": value})
    for shell in ("bash", "dash"):
        assert sourced(shell, profile, ["V"], tmp_path) == {"V": value}
        assert sourced(shell, environment, ["V"], tmp_path)["V"] in (value, "<unset>")
    assert not (tmp_path / "CANARY").exists()
