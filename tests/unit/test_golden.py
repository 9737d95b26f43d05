"""Golden files: each example renders exactly to tests/golden/<example>/ (the build context) and
tests/golden-project/<example>/ (the files written beside envkit.yaml).

Regenerate after an intended template change with `make golden` (ENVKIT_REGEN_GOLDEN=1), then
review the diff with `git diff tests/golden` before committing.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from envkit.render.files import SHIPPED, shipped_text
from tests.helpers import EXAMPLE_NAMES, REPO, render_example, render_example_project

GOLDEN = REPO / "tests" / "golden"
GOLDEN_PROJECT = REPO / "tests" / "golden-project"
REGENERATE = os.environ.get("ENVKIT_REGEN_GOLDEN") == "1"


def test_at_least_six_examples() -> None:
    assert len(EXAMPLE_NAMES) >= 6


@pytest.mark.parametrize("example", EXAMPLE_NAMES)
def test_example_renders_to_its_golden_files(example: str) -> None:
    _compare(render_example(example), GOLDEN / example, example)


@pytest.mark.parametrize("example", EXAMPLE_NAMES)
def test_example_project_files_match_their_golden_files(example: str) -> None:
    _compare(render_example_project(example), GOLDEN_PROJECT / example, example)


def test_shipped_files_are_the_package_files_once_not_a_golden_copy_per_example() -> None:
    """envkit/runtime/activity.py (and, where the rattler bootstrap makes the conda
    environment, envkit-conda) reach every build context unchanged: compared with the
    package's own file here, and left out of the golden folders (six identical copies were
    six places to update)."""
    seen = set()
    for example in EXAMPLE_NAMES:
        files = render_example(example)
        for path in SHIPPED:
            if path in files:
                seen.add(path)
                assert files[path] == shipped_text(path)
            assert not (GOLDEN / example / path).exists()
    assert seen == set(SHIPPED)  # every shipped program is in some example's context


def _compare(files: dict[str, str], folder: Path, example: str) -> None:
    files = {rel: text for rel, text in files.items() if rel not in SHIPPED}
    if REGENERATE:
        shutil.rmtree(folder, ignore_errors=True)
        for rel, text in files.items():
            (folder / rel).parent.mkdir(parents=True, exist_ok=True)
            (folder / rel).write_text(text, encoding="utf-8")
    on_disk = {
        str(p.relative_to(folder)): p.read_text(encoding="utf-8")
        for p in folder.rglob("*")
        if p.is_file()
    }
    assert sorted(on_disk) == sorted(files), "set of rendered files changed: run `make golden`"
    for rel, text in files.items():
        assert text.splitlines() == on_disk[rel].splitlines(), (
            f"{example}/{rel} differs: run `make golden`"
        )
