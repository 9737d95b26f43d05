"""`envkit metrics --textfile DIR`: the exposition written for node_exporter's textfile collector
(`--collector.textfile.directory DIR`), the usual way on a Slurm node or any host where a
long-running exporter is unwelcome (a timer runs envkit; node_exporter serves the file). Written
to a temporary name the collector does not read (it reads only *.prom), then renamed over the
file: a scrape sees the previous file or the new one, never half of one."""

from __future__ import annotations

from pathlib import Path

from envkit.errors import EnvkitError
from envkit.files import write_atomically

FILE_NAME = "envkit.prom"
# The file's first line (a comment, which the collector skips): a file of that name that does
# not start with it was written by someone else and is never replaced.
MARK = "# Written by `envkit metrics --textfile`; replaced on every run.\n"


def write_textfile(folder: Path, text: str) -> Path:
    if not folder.is_dir():
        raise EnvkitError(
            f"--textfile {folder}: not a folder",
            "give the folder node_exporter's --collector.textfile.directory names (it must exist)",
        )
    target = folder / FILE_NAME
    if target.exists() and not _ours(target):
        raise EnvkitError(
            f"{target} exists and was not written by envkit metrics",
            "move it away, or give --textfile another folder",
        )
    try:
        write_atomically(target, MARK + text)  # 0644: node_exporter runs as a user of its own
    except OSError as exc:
        raise EnvkitError(
            f"cannot write in {folder}: {exc.strerror or exc}",
            "run as a user who may write there (node_exporter's textfile folder)",
        ) from None
    return target


def _ours(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return handle.read(len(MARK.encode())) == MARK.encode()
    except OSError:
        return False
