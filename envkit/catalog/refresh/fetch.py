"""Reading the published sources: live over HTTPS, or from a recording of an earlier reading.

A recording is a folder with `recording.json` (when, from where, and per URL the file holding its
answer, or the error it gave). Tests replay one; `--record` makes one from a live reading, so a
maintainer's refresh can be replayed and reviewed exactly."""

from __future__ import annotations

import io
import json
import re
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any, Protocol

TIMEOUT_S = 30.0
USER_AGENT = "envkit-compat-refresh"


class SourceUnavailableError(Exception):
    """A source did not answer; the refresh keeps the table's facts from it and says so."""


Trim = Callable[[str], str]


class Fetcher(Protocol):
    def text(self, url: str, trim: Trim | None = None) -> str: ...

    def wheel(self, url: str) -> dict[str, Any]: ...


def _request(url: str, **kwargs: Any) -> urllib.request.Request:
    if not url.startswith("https://"):  # the sources are all https; never file: or http:
        raise SourceUnavailableError(f"{url}: not an https URL")
    headers = {"User-Agent": USER_AGENT, **kwargs.pop("headers", {})}
    return urllib.request.Request(url, headers=headers, **kwargs)  # noqa: S310 - https only


def _open(url: str, headers: dict[str, str] | None = None) -> bytes:
    request = _request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as answer:  # noqa: S310 - https
            return bytes(answer.read())
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise SourceUnavailableError(f"{url}: {getattr(exc, 'reason', exc)}") from None


class _RangeFile(io.RawIOBase):
    """A remote file read with HTTP range requests, so a wheel's file list and METADATA cost a
    few small reads instead of downloading hundreds of MB."""

    def __init__(self, url: str, size: int) -> None:
        self.url, self.size, self.pos = url, size, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = 0) -> int:
        self.pos = {0: offset, 1: self.pos + offset, 2: self.size + offset}[whence]
        return self.pos

    def readinto(self, buffer: Any) -> int:
        count = min(len(buffer), self.size - self.pos)
        if count <= 0:
            return 0
        span = f"bytes={self.pos}-{self.pos + count - 1}"
        data = _open(self.url, {"Range": span})[:count]
        buffer[: len(data)] = data
        self.pos += len(data)
        return len(data)


def wheel_facts(names: list[str], metadata: str) -> dict[str, Any]:
    """What the refresh needs of a wheel: its CUDA requirements and any bundled CUDA runtime."""
    requires = [
        line.split(":", 1)[1].strip()
        for line in metadata.splitlines()
        if line.startswith("Requires-Dist:") and re.search(r"nvidia|cuda", line)
    ]
    bundled = sorted(n.rsplit("/", 1)[-1] for n in names if re.search(r"/libcudart[-.]", n))
    return {"requires_dist": requires, "bundled": bundled}


class LiveFetcher:
    def text(self, url: str, trim: Trim | None = None) -> str:
        answer = _open(url).decode("utf-8")
        return trim(answer) if trim else answer

    def wheel(self, url: str) -> dict[str, Any]:
        try:
            head = _request(url, method="HEAD")
            with urllib.request.urlopen(head, timeout=TIMEOUT_S) as answer:  # noqa: S310 - https
                size = int(answer.headers["Content-Length"])
        except (urllib.error.URLError, OSError, ValueError, TypeError) as exc:
            raise SourceUnavailableError(f"{url}: {exc}") from None
        remote = io.BufferedReader(_RangeFile(url, size), buffer_size=1 << 20)
        try:
            with zipfile.ZipFile(remote) as wheel:
                names = wheel.namelist()
                meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
                return wheel_facts(names, wheel.read(meta).decode("utf-8"))
        except (zipfile.BadZipFile, StopIteration) as exc:
            raise SourceUnavailableError(f"{url}: not a readable wheel ({exc})") from None


class RecordingFetcher:
    """Wraps a live fetcher and keeps every answer (and every failure) in a folder."""

    def __init__(self, inner: Fetcher, folder: Path) -> None:
        self.inner, self.folder = inner, folder
        self.entries: dict[str, dict[str, str]] = {}

    def _keep(self, kind: str, url: str, read: Any) -> Any:
        try:
            answer = read(url)
        except SourceUnavailableError as exc:
            self.entries[f"{kind} {url}"] = {"error": str(exc)}
            raise
        name = f"{len(self.entries):03d}.{'txt' if kind == 'text' else 'json'}"
        body = answer if kind == "text" else json.dumps(answer, indent=1)
        (self.folder / name).write_text(body, encoding="utf-8")
        self.entries[f"{kind} {url}"] = {"file": name}
        return answer

    def text(self, url: str, trim: Trim | None = None) -> str:
        return str(self._keep("text", url, lambda u: self.inner.text(u, trim)))

    def wheel(self, url: str) -> dict[str, Any]:
        return dict(self._keep("wheel", url, self.inner.wheel))

    def save(self, note: str) -> None:
        index = {"recorded": date.today().isoformat(), "note": note, "answers": self.entries}
        (self.folder / "recording.json").write_text(json.dumps(index, indent=1) + "\n")


class ReplayFetcher:
    """Answers from a recording; a URL the recording lacks is a source that did not answer."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        index = json.loads((folder / "recording.json").read_text(encoding="utf-8"))
        self.recorded: str = index["recorded"]
        self.answers: dict[str, dict[str, str]] = index["answers"]

    def _answer(self, key: str) -> str:
        entry = self.answers.get(key)
        if entry is None:
            raise SourceUnavailableError(f"{key.split(' ', 1)[1]}: not in the recording")
        if "file" not in entry:
            raise SourceUnavailableError(entry["error"])  # the error already names the URL
        return (self.folder / entry["file"]).read_text(encoding="utf-8")

    def text(self, url: str, trim: Trim | None = None) -> str:
        return self._answer(f"text {url}")  # recorded already trimmed

    def wheel(self, url: str) -> dict[str, Any]:
        facts: dict[str, Any] = json.loads(self._answer(f"wheel {url}"))
        return facts
