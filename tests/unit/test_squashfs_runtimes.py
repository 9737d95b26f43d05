"""Which daemonless runtime runs a bundle's SquashFS (`verify --bundle`): the first this machine
has, Charliecloud, then Apptainer (or SingularityCE), then enroot; a missing one is said with
what to install. (Each runs the suite for real, or through a stand-in where none can be
installed here, in tests/e2e/test_bundle.py.)"""

from __future__ import annotations

import shutil

import pytest

from envkit.errors import EngineUnreachableError
from envkit.targets import open_target
from envkit.targets import squashfs as runtimes


@pytest.mark.parametrize(
    ("installed", "chosen"),
    [
        ({"ch-run", "apptainer", "enroot"}, "charliecloud"),
        ({"singularity", "enroot"}, "apptainer"),
        ({"enroot"}, "enroot"),
        (set(), "charliecloud"),  # none: its error says what to install
    ],
)
def test_the_first_runtime_the_machine_has_is_chosen(
    monkeypatch: pytest.MonkeyPatch, installed: set[str], chosen: str
) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: name if name in installed else None)
    assert runtimes.available_runtime() == chosen


def test_a_runtime_that_is_not_installed_is_said_with_its_fix(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    target = open_target("apptainer:///site/bundle/rootfs.sqfs")
    assert target.notes == ["run by Apptainer from /site/bundle/rootfs.sqfs"]
    with pytest.raises(EngineUnreachableError, match="apptainer or singularity is not installed"):
        target.run(["python3", "-V"], 10)
