"""Property: for any YAML structure at any field of envkit.yaml, envkit either refuses with its
own error (the CLI's exit 2) or renders files that parse: YAML files load, shell scripts pass
`bash -n` and `sh -n`. No other exception (a traceback for the user) is allowed, and nothing
takes long."""

from __future__ import annotations

import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from envkit.config import bounded
from envkit.config.load import load_text
from envkit.config.model import Spec
from envkit.errors import EnvkitError
from envkit.plan import make_plan
from envkit.render.files import render_files
from tests.helpers import EXAMPLES, TEST_HOST

KEY = (EXAMPLES / "seed-pytorch-1.11" / "keys" / "lead.pub").read_text().strip()
BASE: dict[str, Any] = {"name": "prop", "ssh": {"authorized_keys": [KEY]}}
WORDS = st.sampled_from(
    [
        *[
            "",
            "a",
            "all",
            "none",
            "0",
            "-1",
            "true",
            "16gb",
            "3.11",
            "2.5.1",
            "12.4",
            "$(id)",
            "`id`",
            "a\nb",
            "'",
            '"',
            "\\",
            "::1",
            "http://x",
            "",
        ],
        *[
            "https://x.org/s",
            "ENVKIT_USER",
            "/run/envkit",
            "./a:/b",
            "torch",
            "root",
            "\x00",
            "\u202e",
            "é",
            "x=1 y",
        ],
        "0.0.0.0",  # noqa: S104 - a value to render, not an address to bind
        "x" * 300,
    ]
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    WORDS,
    st.text(max_size=40),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(WORDS, st.text(max_size=8)), inner, max_size=4),
    ),
    max_leaves=12,
)


def field_paths(model: type[BaseModel], prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    paths: list[tuple[str, ...]] = []
    for name, info in model.model_fields.items():
        here = (*prefix, name)
        paths.append(here)
        inner = info.annotation
        for candidate in (inner, *getattr(inner, "__args__", ())):
            if isinstance(candidate, type) and issubclass(candidate, BaseModel):
                paths += field_paths(candidate, here)
    return paths


PATHS = field_paths(Spec)


def example_values() -> dict[tuple[str, ...], list[object]]:
    """Every value the examples give each field: mixed with random ones, most configs are then
    valid in all but one place, so cross-field rules and the renderers are reached too."""
    found: dict[tuple[str, ...], list[object]] = {}

    def walk(node: object, path: tuple[str, ...]) -> None:
        if path in PATHS:
            found.setdefault(path, []).append(node)
        if isinstance(node, dict):
            for key, child in node.items():
                walk(child, (*path, str(key)))

    for config in sorted(EXAMPLES.glob("*/envkit.yaml")):
        walk(yaml.safe_load(config.read_text()), ())
    return found


KNOWN = example_values()


def change_for(path: tuple[str, ...]) -> st.SearchStrategy[tuple[tuple[str, ...], object]]:
    seeds = KNOWN.get(path)
    values = st.one_of(st.sampled_from(seeds), VALUES) if seeds else VALUES
    return st.tuples(st.just(path), values)


def place(config: dict[str, Any], path: tuple[str, ...], value: object) -> None:
    node = config
    for part in path[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = node[part] = {}
        node = child
    node[path[-1]] = value


def check_parses(files: dict[str, str]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        scripts = []
        for rel, text in files.items():
            if rel.endswith((".yml", ".yaml")) or rel.endswith("condarc"):
                yaml.safe_load(text)
            if rel.endswith(".sh"):
                path = Path(folder) / rel.replace("/", "_")
                path.write_text(text)
                scripts.append(str(path))
        for shell in ("bash", "sh"):
            checks = [
                s for s in scripts if shell == "bash" or "bash" not in Path(s).read_text()[:20]
            ]
            done = subprocess.run(
                [shell, "-c", 'for f; do "$0" -n "$f" || exit 1; done', shell, *checks],
                capture_output=True,
                text=True,
                check=False,
            )
            assert done.returncode == 0, done.stderr


@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.lists(st.sampled_from(PATHS).flatmap(change_for), min_size=1, max_size=6))
def test_any_value_anywhere_is_refused_cleanly_or_renders_parseable_files(
    changes: list[tuple[tuple[str, ...], object]],
) -> None:
    config = yaml.safe_load(yaml.safe_dump(BASE))
    for path, value in changes:
        place(config, path, value)
    try:
        text = yaml.safe_dump(config, allow_unicode=True)
    except yaml.YAMLError:
        return  # not expressible as YAML: no user could write it
    started = time.monotonic()
    try:
        files = render_files(
            make_plan(load_text(text, "envkit.yaml", Path("/nonexistent/envkit.yaml")), TEST_HOST)
        )
    except EnvkitError:
        event("refused")
        return  # the CLI prints it and exits 2
    finally:
        assert time.monotonic() - started < 5, "one config took over 5 s"
    event("rendered")
    check_parses(files)


@settings(max_examples=200, deadline=None)
@given(VALUES.filter(lambda v: isinstance(v, dict)), st.sampled_from([False, True]))
def test_the_one_pass_loader_reads_what_safe_load_reads(data: object, flow: bool) -> None:
    """bounded.load builds data from parser events itself; it must agree with PyYAML."""
    try:
        text = yaml.safe_dump(data, allow_unicode=True, default_flow_style=flow)
    except yaml.YAMLError:
        return
    problem, loaded, _ = bounded.load(text)
    expected = yaml.safe_load(text)
    if problem is None:
        assert loaded == expected or repr(loaded) == repr(expected)  # NaN != NaN
    else:
        assert "duplicate key" in problem.problem  # safe_dump of keys 1 and '1'? never quietly


def test_the_examples_load_as_safe_load_reads_them() -> None:
    for config in sorted(EXAMPLES.glob("*/envkit.yaml")):
        text = config.read_text()
        problem, loaded, lines = bounded.load(text)
        assert problem is None and loaded == yaml.safe_load(text), config
        assert lines[("name",)] == 1 + text.splitlines().index(f"name: {loaded['name']}")
