"""Every bad config exits 2 with the field path, the YAML line, the bad value and the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from envkit.config.load import load_text
from envkit.errors import ConfigError
from envkit.plan import make_plan
from tests.helpers import TEST_HOST
from tests.unit.bad_configs import BAD


@pytest.mark.parametrize(("case", "text", "path", "line", "phrase"), BAD, ids=[b[0] for b in BAD])
def test_bad_config_names_field_line_and_fix(
    case: str, text: str, path: str, line: int | None, phrase: str, tmp_path: Path
) -> None:
    source = tmp_path / "envkit.yaml"
    with pytest.raises(ConfigError) as caught:
        make_plan(load_text(text, source=str(source), path=source), TEST_HOST)
    issues = caught.value.issues
    assert [i.path for i in issues if i.path == path], (
        f"{case}: paths were {[i.path for i in issues]}"
    )
    issue = next(i for i in issues if i.path == path)
    assert issue.line == line
    assert issue.fix, "every issue carries a fix"
    assert phrase in (issue.problem + " " + issue.fix)
    shown = str(caught.value)
    assert f"{source}:{line}" in shown if line else str(source) in shown


def test_there_are_at_least_forty_bad_config_cases() -> None:
    assert len(BAD) >= 40


def test_a_private_key_is_never_echoed(tmp_path: Path) -> None:
    body = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUtc2VjcmV0"
    secret = f"-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n-----END OPENSSH PRIVATE KEY-----"
    (tmp_path / "id").write_text(secret)
    for text in (
        "name: a\nssh:\n  authorized_key_files: [id]\n",
        f"name: a\nssh:\n  authorized_keys: ['-----BEGIN OPENSSH PRIVATE KEY----- {body}']\n",
    ):
        source = tmp_path / "envkit.yaml"
        with pytest.raises(ConfigError) as caught:
            make_plan(load_text(text, source=str(source), path=source), TEST_HOST)
        assert "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUtc2VjcmV0" not in str(caught.value)
        assert "PRIVATE" in str(caught.value)


def test_all_problems_are_reported_together(tmp_path: Path) -> None:
    text = "name: Bad\nssh:\n  port: 0\nruntime:\n  gpus: maybe\n"
    with pytest.raises(ConfigError) as caught:
        load_text(text)
    assert [i.path for i in caught.value.issues] == ["name", "ssh.port", "runtime.gpus"]
