"""The code that runs inside images runs on their Python, not envkit's: the checks bundle on
Python 3.8 (the pytorch 1.11 images), the runtime programs on any python3. Both must parse as
Python 3.8: a `match`, a parenthesised context manager or `X | Y` evaluated at runtime would
pass envkit's own tests on 3.11 and break on the box."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.helpers import REPO

OLD_PYTHON = (3, 8)
SHIPPED_CODE = sorted(
    [*(REPO / "envkit" / "checks").rglob("*.py"), *(REPO / "envkit" / "runtime").rglob("*.py")]
)


@pytest.mark.parametrize("path", SHIPPED_CODE, ids=lambda p: str(p.relative_to(REPO)))
def test_code_that_runs_in_images_parses_as_python_3_8(path: Path) -> None:
    ast.parse(path.read_text(encoding="utf-8"), filename=str(path), feature_version=OLD_PYTHON)


def test_the_parse_check_can_fail() -> None:
    with pytest.raises(SyntaxError):
        ast.parse("match x:\n    case 1:\n        pass\n", feature_version=OLD_PYTHON)
    with pytest.raises(SyntaxError):
        ast.parse("with (open('a') as a, open('b') as b):\n    pass\n", feature_version=OLD_PYTHON)
