"""Property: no value in envkit.yaml can add, remove or split a Dockerfile instruction, or add a
shell word. Either the config is refused, or the rendered Dockerfile has exactly the baseline's
instruction list and every user value lands as one shell word."""

from __future__ import annotations

import io
import shlex
from typing import Any

import yaml
from dockerfile_parse import DockerfileParser
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from envkit.config.load import load_text
from envkit.errors import ConfigError
from envkit.plan import make_plan
from envkit.render.files import render_files
from tests.helpers import EXAMPLES, TEST_HOST

KEY = (EXAMPLES / "seed-pytorch-1.11" / "keys" / "lead.pub").read_text().strip()
BASE: dict[str, Any] = {
    "name": "prop",
    "base": {"flavor": "cuda"},
    "torch": "2.5.1",
    "cuda": "12.4",
    "python": "3.11",
    "conda": {"channels": ["conda-forge"], "dependencies": ["numpy"], "pip": ["rich"]},
    "packages": {"apt": ["git"], "pip": ["tqdm"], "conda": ["scipy"]},
    "mirrors": {"preset": "tuna"},
    "ssh": {"authorized_keys": [KEY], "uid": 1000, "gid": 1000},
    "runtime": {"env": {"A": "b"}, "volumes": ["./data:/data"], "ports": ["6006:6006"]},
}
# Fields a user controls: (path, how a value is placed, a valid seed, characters it may grow by).
PRINTABLE = "".join(chr(c) for c in range(32, 127))
SPEC_CHARS = "<>=!~.,*0123456789 ;()[]\"'abcxyz_-+"
TARGETS = [
    ("packages.apt", "list", "git", "abc0123456789+.-=:~"),
    ("packages.pip", "list", "numpy", SPEC_CHARS + "@/:$`\\"),
    ("packages.conda", "list", "numpy", SPEC_CHARS + ":|"),
    ("conda.dependencies", "list", "scipy", SPEC_CHARS + ":|"),
    ("conda.pip", "list", "rich", SPEC_CHARS),
    ("conda.channels", "list", "nvidia", "abc-_./:"),
    ("runtime.volumes", "list", "./x:/x", "abc/:.$-{}~ro"),
    ("runtime.ports", "list", "7000:7000", "0123456789:./tcpud"),
    ("runtime.env", "value", "v", PRINTABLE),
    ("runtime.env", "key", "K", "ABC_09-$ "),
    ("name", "scalar", "prop", "abc-_09. "),
    ("ssh.user", "scalar", "dev", "abc-_09 "),
    ("mirrors.pip", "scalar", "https://m.org/simple", "abc/:.%+~-_?&="),
    ("mirrors.apt", "scalar", "http://127.0.0.1:3142", "abc/:.%+~-_"),
    ("mirrors.pytorch_index", "scalar", "https://m.org/whl/cu124", "abc/:.%+~-_"),
    ("conda.installer_url", "scalar", "https://m.org/Miniforge3.sh", "abc/:.%+~-_$()"),
    ("ssh.authorized_keys", "key-comment", "me@host", PRINTABLE),
    ("runtime.shm_size", "scalar", "16", "gmbk0123456789."),
    ("torch", "scalar", "2.5", ".1"),
]
NASTY = st.sampled_from(
    [
        "",
        "\n",
        "\r",
        "\\",
        "\\\n",
        "'",
        '"',
        "`",
        "$",
        "$(id)",
        "${PATH}",
        ";",
        "&&",
        "|",
        " ",
        "\t",
        "#",
        "\nRUN id",
        "{{",
        "{%",
        "--",
        "\x85",
        "\u2028",
    ]
)


@st.composite
def placed_values(draw: st.DrawFn) -> tuple[str, str, str]:
    path, how, seed, alphabet = draw(st.sampled_from(TARGETS))
    grown = seed + draw(st.text(alphabet=alphabet, max_size=10))
    if draw(st.booleans()):  # half the time, splice in something known to be dangerous
        cut = draw(st.integers(0, len(grown)))
        grown = grown[:cut] + draw(NASTY) + grown[cut:]
    return path, how, grown


def _instructions(dockerfile: str) -> list[str]:
    # In memory: given no file object, the parser writes ./Dockerfile into the working directory.
    parser = DockerfileParser(fileobj=io.BytesIO())
    parser.content = dockerfile
    return [item["instruction"] for item in parser.structure]


def _place(config: dict[str, Any], path: str, how: str, value: str) -> None:
    *parents, leaf = path.split(".")
    node = config
    for part in parents:
        node = node[part]
    if how == "list":
        node[leaf] = [*node[leaf], value]
    elif how == "value":
        node[leaf] = {**node[leaf], "B": value}
    elif how == "key":
        node[leaf] = {**node[leaf], value: "v"}
    elif how == "key-comment":
        node[leaf] = [f"{KEY.rsplit(' ', 1)[0]} {value}"]
    else:
        node[leaf] = value


def _render(config: dict[str, Any]) -> dict[str, str]:
    text = yaml.safe_dump(config)
    return render_files(make_plan(load_text(text), TEST_HOST))


DOCKERFILES = ("Dockerfile", "Dockerfile.classic")  # BuildKit's rendering and the classic one
BASELINE = {name: _instructions(_render(BASE)[name]) for name in DOCKERFILES}


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(placed=placed_values())
def test_no_value_changes_the_instruction_list(placed: tuple[str, str, str]) -> None:
    config = yaml.safe_load(yaml.safe_dump(BASE))
    path, how, value = placed
    _place(config, path, how, value)
    try:
        files = _render(config)
    except ConfigError:
        event(f"{path}: refused")
        return  # refused: nothing rendered, nothing written
    event(f"{path}: rendered")
    for name in DOCKERFILES:
        got = _instructions(files[name])
        assert got == BASELINE[name], f"{path}={value!r} changed {name}'s instructions"
    dockerfile = files["Dockerfile"]
    compose = yaml.safe_load(files["docker-compose.yml"])
    assert list(compose) == ["services", "volumes"]
    if path == "packages.pip":
        run = next(
            line
            for line in DockerfileParser_runs(dockerfile)
            if "pip install" in line  # the user's packages: not uv's own install, not torch's
            and "--target" not in line
            and "pip-constraints" not in line
            and "conda-pip.txt" not in line  # the conda file's pip section, after torch
        )
        words = shlex.split(run)
        assert value in words, f"{value!r} is not one shell word in {words}"


def DockerfileParser_runs(dockerfile: str) -> list[str]:  # noqa: N802 - reads as the parser's view
    # In memory: given no file object, the parser writes ./Dockerfile into the working directory.
    parser = DockerfileParser(fileobj=io.BytesIO())
    parser.content = dockerfile
    return [item["value"] for item in parser.structure if item["instruction"] == "RUN"]
