"""Write rendered files: all or nothing, only what changed, and nothing that is not envkit's.

Two roots. The build context (.envkit/ by default) is envkit's: a manifest there lists what the
last render wrote, so a file no longer produced is removed, and a file of a produced name that
the manifest does not list (a hand-written Dockerfile in `-o .`) is someone else's: render
refuses to replace it without --force. The project folder (beside envkit.yaml) is the user's:
envkit writes there only files that carry its marker, leaves a file of the same name without it
untouched, and removes only its own files that are no longer made.

Writing is a transaction: every new file is first staged beside its target (a failure there
leaves the previous render as it was), then each is renamed into place."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TypeVar

from envkit.errors import EnvkitError
from envkit.render.devcontainer import FOLDER, is_ours
from envkit.render.files import EXECUTABLE

MANIFEST = ".envkit-files"
# Where envkit's earlier project files may be, for the stale check.
PROJECT_PATTERN = f"{FOLDER}/**/devcontainer.json"
T = TypeVar("T")


@dataclass(frozen=True)
class RenderResult:
    out_dir: Path
    changed: tuple[str, ...]  # written because new or different
    unchanged: tuple[str, ...]
    removed: tuple[str, ...]  # left over from an earlier render, no longer produced
    foreign: tuple[str, ...] = field(default=())  # the user's own file of that name: left alone
    stray: tuple[str, ...] = field(default=())  # in envkit's folders, never written by envkit


class OutputFolderError(EnvkitError):
    """The output folder cannot take this render; nothing was written."""


@dataclass(frozen=True)
class FilesDiff:
    """A render's files against what is there: the build context's, or the project's own."""

    changed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)  # ours (by manifest or mark), not produced
    foreign: list[str] = field(default_factory=list)  # same name, not ours: never touched
    # Context only: inside a folder envkit writes, neither produced nor in the manifest.
    stray: list[str] = field(default_factory=list)


@dataclass
class Transaction:
    """Files staged beside their targets; `commit` renames them in, `abort` removes them."""

    staged: list[tuple[Path, Path]] = field(default_factory=list)

    def stage(self, path: Path, text: str, executable: bool) -> None:
        if path.is_dir():
            raise OutputFolderError(
                f"cannot write {path}: a folder is in the way",
                "move that folder away; envkit writes a file there",
            )
        _guard(lambda: path.parent.mkdir(parents=True, exist_ok=True), path.parent)
        fd, tmp = _guard(
            lambda: tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp"),
            path.parent,
        )
        self.staged.append((Path(tmp), path))
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            _guard(lambda: handle.write(text), path)
        _guard(lambda: os.chmod(tmp, 0o755 if executable else 0o644), path)  # noqa: PTH101

    def commit(self) -> None:
        for tmp, path in self.staged:
            _guard(partial(tmp.replace, path), path)
        self.staged.clear()

    def abort(self) -> None:
        for tmp, _ in self.staged:
            tmp.unlink(missing_ok=True)
        self.staged.clear()


def _guard(action: Callable[[], T], path: Path) -> T:
    """A filesystem failure becomes an exit-2 message naming the path (never a traceback)."""
    try:
        return action()
    except OSError as error:
        raise OutputFolderError(
            f"cannot write {path}: {error.strerror or error}",
            "render into a writable folder (-o DIR); a file where a folder is needed must be "
            "moved away first",
        ) from None


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _strays(files: dict[str, str], out_dir: Path, previous: set[str]) -> list[str]:
    """Files in the sub-folders envkit writes (envkit/, keys/: the Dockerfile copies them whole)
    that it neither produces nor wrote. A stray `ubuntu-ports.list` would be used on arm64."""
    folders = {rel.split("/", 1)[0] for rel in files if "/" in rel}
    found: list[str] = []
    for top in sorted(folders):
        base = out_dir / top
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*")):
            rel = path.relative_to(out_dir).as_posix()
            if path.is_file() and rel not in files and rel not in previous:
                found.append(rel)
    return found


def diff_files(files: dict[str, str], out_dir: Path) -> FilesDiff:
    if out_dir.exists() and not out_dir.is_dir():
        raise OutputFolderError(
            f"{out_dir} is not a folder", "name a folder with -o (it is made when missing)"
        )
    # What the last render wrote here (nothing where envkit has never rendered into it).
    written = (_read(out_dir / MANIFEST) or "").splitlines()
    previous = {line for line in written if line and ".." not in line.split("/")}
    diff = FilesDiff()
    for rel, text in sorted(files.items()):
        target = out_dir / rel
        current = _read(target) if target.is_file() else None
        if current == text:
            diff.unchanged.append(rel)
        elif target.exists() and rel not in previous:
            diff.foreign.append(rel)
        else:
            diff.changed.append(rel)
    diff.stale.extend(sorted(p for p in previous - set(files) if (out_dir / p).is_file()))
    diff.stray.extend(_strays(files, out_dir, previous))
    return diff


def stage_context(files: dict[str, str], out_dir: Path, txn: Transaction, force: bool) -> FilesDiff:
    """Stage the context's new files and manifest; returns the diff (its stale files: to
    delete)."""
    diff = diff_files(files, out_dir)
    if diff.foreign and not force:
        more = len(diff.foreign) - 5
        shown = ", ".join(diff.foreign[:5]) + (f" and {more} more" if more > 0 else "")
        raise OutputFolderError(
            f"{out_dir} already holds files envkit did not write: {shown}",
            "render into another folder (-o DIR), or run `envkit render --force` to replace them",
        )
    for rel in diff.changed + diff.foreign:
        txn.stage(out_dir / rel, files[rel], rel in EXECUTABLE)
    manifest = "".join(f"{rel}\n" for rel in sorted(files))
    if _read(out_dir / MANIFEST) != manifest:
        txn.stage(out_dir / MANIFEST, manifest, executable=False)
    return diff


def remove_files(root: Path, rels: list[str]) -> None:
    for rel in rels:
        _guard(partial((root / rel).unlink, missing_ok=True), root / rel)
        folder = (root / rel).parent
        # its folders, where the file was the last thing in them (one left behind is harmless)
        with contextlib.suppress(OSError):
            while folder != root and folder.is_dir() and not any(folder.iterdir()):
                folder.rmdir()
                folder = folder.parent


def diff_project_files(files: dict[str, str], root: Path) -> FilesDiff:
    """PROJECT_PATTERN (a glob under `root`) finds envkit's earlier files for the stale check."""
    diff = FilesDiff()
    for rel, text in sorted(files.items()):
        current = _read(root / rel)
        if current == text:
            diff.unchanged.append(rel)
        elif current is not None and not is_ours(current):
            diff.foreign.append(rel)
        elif (root / rel).exists() and current is None:
            diff.foreign.append(rel)  # unreadable or not a file: not ours to replace
        else:
            diff.changed.append(rel)
    for path in sorted(root.glob(PROJECT_PATTERN)):
        earlier = path.relative_to(root).as_posix()
        found = _read(path)
        if earlier not in files and found is not None and is_ours(found):
            diff.stale.append(earlier)
    return diff
