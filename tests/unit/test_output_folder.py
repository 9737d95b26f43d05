"""Output-folder safety: render replaces only what it wrote, writes all or nothing, turns
filesystem failures into exit-2 messages, and --check names files envkit did not write."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import envkit

CONFIG = "name: a\nmirrors: {preset: tuna}\n"


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def project(tmp_path: Path) -> Path:
    (tmp_path / "envkit.yaml").write_text(CONFIG)
    return tmp_path


def test_a_hand_written_dockerfile_is_not_replaced_without_force(tmp_path: Path) -> None:
    out = project(tmp_path) / "out"
    out.mkdir()
    (out / "Dockerfile").write_text("FROM scratch  # mine\n")
    refused = envkit("render", "-o", str(out), cwd=tmp_path)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "envkit did not write: Dockerfile" in refused.stderr and "--force" in refused.stderr
    assert snapshot(out) == {"Dockerfile": b"FROM scratch  # mine\n"}, "nothing written"
    assert not (tmp_path / ".devcontainer").exists(), "the project root is untouched as well"
    forced = envkit("render", "--force", "-o", str(out), cwd=tmp_path)
    assert forced.returncode == 0, forced.stderr
    assert "# mine" not in (out / "Dockerfile").read_text()
    assert "FROM " in (out / "Dockerfile").read_text()
    again = envkit("render", "-o", str(out), cwd=tmp_path)
    assert again.returncode == 0 and "0 changed" in again.stdout, "now it is envkit's"


def test_check_reports_stray_files_in_envkits_folders(tmp_path: Path) -> None:
    root = project(tmp_path)
    assert envkit("render", cwd=root).returncode == 0
    stray = root / ".envkit/envkit/apt/ubuntu-ports.list.orig"
    stray.write_text("deb http://evil/ubuntu noble main\n")
    check = envkit("render", "--check", cwd=root)
    assert check.returncode == 1
    assert "stray:   .envkit/envkit/apt/ubuntu-ports.list.orig" in check.stdout
    assert "stray files" in check.stderr
    again = envkit("render", cwd=root)
    assert again.returncode == 0 and "was not written by envkit" in again.stderr
    assert stray.is_file(), "render never deletes what it did not write"


@pytest.mark.parametrize("shape", ["out-is-a-file", "envkit-subfolder-is-a-file"])
def test_a_file_where_a_folder_belongs_is_exit_2_and_writes_nothing(
    tmp_path: Path, shape: str
) -> None:
    root = project(tmp_path)
    out = root / "out"
    if shape == "out-is-a-file":
        out.write_text("x\n")
    else:
        out.mkdir()
        (out / "envkit").write_text("x\n")
    before = snapshot(root)
    result = envkit("render", "-o", str(out), cwd=root)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and "fix:" in result.stderr
    assert str(out) in result.stderr
    assert snapshot(root) == before, "no half-rendered output"


def test_a_read_only_filesystem_is_exit_2_and_leaves_the_last_render(tmp_path: Path) -> None:
    """A real read-only mount needs privileges; /proc is one every Linux has, read-only to all
    (root included) for files it does not know."""
    root = project(tmp_path)
    result = envkit("render", "-o", "/proc/envkit-render-test", cwd=root)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and "cannot write /proc" in result.stderr


def test_a_failure_midway_leaves_the_previous_render_intact(tmp_path: Path) -> None:
    """The second render changes pip.conf and the apt lists, and its last target cannot be
    written (a folder now sits where the file was): the files already staged are not put in."""
    root = project(tmp_path)
    assert envkit("render", cwd=root).returncode == 0
    before = snapshot(root / ".envkit")
    (root / "envkit.yaml").write_text("name: a\nmirrors: {preset: ustc}\n")
    last = sorted(p for p in before if p.startswith("envkit/runtime/"))[-1]
    (root / ".envkit" / last).unlink()
    (root / ".envkit" / last).mkdir()
    (root / ".envkit" / last / "x").write_text("in the way\n")
    result = envkit("render", cwd=root)
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert last in result.stderr and "fix:" in result.stderr
    after = snapshot(root / ".envkit")
    for rel in ("envkit/pip.conf", "envkit/apt/debian.sources", ".envkit-files"):
        assert after.get(rel) == before.get(rel), f"{rel} changed though the render failed"
    leftovers = [p for p in after if p.endswith(".tmp")]
    assert not leftovers, f"staged files left behind: {leftovers}"
