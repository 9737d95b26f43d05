"""Write rendered files: atomically, only what changed, and nothing that is not envkit's.

Two roots. The build context (.envkit/ by default) is envkit's alone: a manifest there lists what
the last render wrote, so a file no longer produced is removed. The project folder (beside
envkit.yaml) is the user's: envkit writes there only files that carry its marker, leaves a file
of the same name without it untouched, and removes only its own files that are no longer made."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from envkit.render.files import EXECUTABLE

MANIFEST = ".envkit-files"


@dataclass(frozen=True)
class RenderResult:
    out_dir: Path
    changed: tuple[str, ...]  # written because new or different
    unchanged: tuple[str, ...]
    removed: tuple[str, ...]  # left over from an earlier render, no longer produced
    foreign: tuple[str, ...] = field(default=())  # the user's own file of that name: left alone


def _write_atomic(path: Path, text: str, executable: bool) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        os.chmod(tmp, 0o755 if executable else 0o644)  # noqa: PTH101 - on the fd's path
        Path(tmp).replace(path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _previous_files(out_dir: Path) -> set[str]:
    manifest = out_dir / MANIFEST
    if not manifest.is_file():
        return set()
    return {line for line in manifest.read_text(encoding="utf-8").splitlines() if line}


def diff_files(files: dict[str, str], out_dir: Path) -> tuple[list[str], list[str], list[str]]:
    changed: list[str] = []
    unchanged: list[str] = []
    for rel, text in sorted(files.items()):
        target = out_dir / rel
        same = target.is_file() and target.read_text(encoding="utf-8") == text
        (unchanged if same else changed).append(rel)
    stale = sorted(p for p in _previous_files(out_dir) - set(files) if (out_dir / p).is_file())
    return changed, unchanged, stale


def write_files(files: dict[str, str], out_dir: Path) -> RenderResult:
    changed, unchanged, stale = diff_files(files, out_dir)
    for rel in changed:
        _write_atomic(out_dir / rel, files[rel], rel in EXECUTABLE)
    for rel in stale:
        (out_dir / rel).unlink()
    manifest = "".join(f"{rel}\n" for rel in sorted(files))
    _write_atomic(out_dir / MANIFEST, manifest, executable=False)
    return RenderResult(out_dir, tuple(changed), tuple(unchanged), tuple(stale))


@dataclass(frozen=True)
class ProjectDiff:
    changed: list[str]
    unchanged: list[str]
    stale: list[str]  # ours, no longer produced
    foreign: list[str]  # same name, not ours: never touched


def diff_project_files(
    files: dict[str, str], root: Path, pattern: str, is_ours: Callable[[str], bool]
) -> ProjectDiff:
    """`pattern` (a glob under `root`) finds envkit's earlier files for the stale check."""
    diff = ProjectDiff([], [], [], [])
    for rel, text in sorted(files.items()):
        current = _read(root / rel)
        if current == text:
            diff.unchanged.append(rel)
        elif current is not None and not is_ours(current):
            diff.foreign.append(rel)
        else:
            diff.changed.append(rel)
    for path in sorted(root.glob(pattern)):
        earlier = path.relative_to(root).as_posix()
        found = _read(path)
        if earlier not in files and found is not None and is_ours(found):
            diff.stale.append(earlier)
    return diff


def write_project_files(
    files: dict[str, str], root: Path, pattern: str, is_ours: Callable[[str], bool]
) -> RenderResult:
    diff = diff_project_files(files, root, pattern, is_ours)
    for rel in diff.changed:
        _write_atomic(root / rel, files[rel], executable=False)
    for rel in diff.stale:
        (root / rel).unlink()
        _remove_empty_parents(root / rel, root)
    return RenderResult(
        root, tuple(diff.changed), tuple(diff.unchanged), tuple(diff.stale), tuple(diff.foreign)
    )


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError, UnicodeDecodeError):
        return None


def _remove_empty_parents(path: Path, root: Path) -> None:
    folder = path.parent
    while folder != root and folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()
        folder = folder.parent
