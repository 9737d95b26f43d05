"""Where two images of the same lock differ: layer by layer (the engine's diff ids, in order),
and inside each layer that differs, file by file (content, kind, mode, owner, link target, or
only a time). A step toward bit-for-bit: it says what keeps two builds of one lock apart.

Layers are read from the engine's own `docker save` archive (one temporary file per image,
removed after); nothing is run in either image."""

from __future__ import annotations

import hashlib
import json
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

Entry = tuple[str, ...]  # (kind, mode, owner, link or content sha256, mtime)
MTIME = 4


@dataclass(frozen=True)
class FileChange:
    path: str
    what: str  # "content", "only in LEFT", "mode", "owner", "kind", "link", "time only"


@dataclass(frozen=True)
class LayerChange:
    index: int  # 1-based, from the bottom
    step: str  # the instruction that made it (the image's history)
    left: str | None  # diff id, or None where that image has fewer layers
    right: str | None
    files: tuple[FileChange, ...]


def _layer_ids(client: Any, ref: str) -> list[str]:
    """The image's layer diff ids, bottom first."""
    return list(client.images.get(ref).attrs.get("RootFS", {}).get("Layers") or [])


def _entries(layer: tarfile.TarFile) -> dict[str, Entry]:
    found: dict[str, Entry] = {}
    for member in layer:
        if member.isfile():
            handle = layer.extractfile(member)
            kind, target = "file", hashlib.sha256(handle.read() if handle else b"").hexdigest()
        elif member.issym() or member.islnk():
            kind, target = "link", member.linkname
        else:
            kind, target = ("dir" if member.isdir() else "other"), ""
        owner = f"{member.uid}:{member.gid}"
        # "./etc" and "etc" name one path; lstrip("./") would also eat a dotfile's or a
        # whiteout's own leading dot (".wh.x").
        name = member.name.removeprefix("./").lstrip("/")
        found["/" + name] = (kind, oct(member.mode), owner, target, str(member.mtime))
    return found


def _what(left: Entry | None, right: Entry | None, names: tuple[str, str]) -> str | None:
    if left is None or right is None:
        return f"only in {names[0] if right is None else names[1]}"
    content = "content" if left[0] == "file" else "link"
    for index, word in ((0, "kind"), (3, content), (1, "mode"), (2, "owner"), (MTIME, "time only")):
        if left[index] != right[index]:
            return word
    return None


def _layer_files(saved: _Saved, index: int) -> dict[str, Entry]:
    if index >= len(saved.layers):
        return {}
    inner = saved.archive.extractfile(saved.layers[index])
    if inner is None:
        return {}
    with tarfile.open(fileobj=inner, mode="r|*") as layer:
        return _entries(layer)


@dataclass(frozen=True)
class _Saved:
    archive: tarfile.TarFile
    layers: list[str]  # each layer's tar inside the archive, bottom first
    steps: list[str]  # the instruction that made each layer (the config's history)


def _saved(client: Any, ref: str, folder: Path) -> _Saved:
    path = folder / (hashlib.sha256(ref.encode()).hexdigest()[:12] + ".tar")
    with path.open("wb") as out:
        out.writelines(client.images.get(ref).save(named=False))
    archive = tarfile.open(path)  # noqa: SIM115  # closed by compare(), which reads it after
    manifest = json.loads(_read(archive, "manifest.json"))[0]
    history = json.loads(_read(archive, manifest["Config"])).get("history") or []
    steps = [_step(h.get("created_by", "")) for h in history if not h.get("empty_layer")]
    return _Saved(archive, list(manifest["Layers"]), steps)


def _step(created_by: object) -> str:
    """The instruction as written (the classic builder prefixes `/bin/sh -c #(nop) `)."""
    text = " ".join(str(created_by).split()).removeprefix("/bin/sh -c #(nop) ")
    return text if len(text) <= 120 else text[:119] + "…"


def _read(archive: tarfile.TarFile, name: str) -> bytes:
    handle = archive.extractfile(name)
    return handle.read() if handle else b"{}"


def compare(client: Any, left: str, right: str) -> list[LayerChange]:
    """Every layer that differs between LEFT and RIGHT, with its files that differ."""
    ids = (_layer_ids(client, left), _layer_ids(client, right))
    count = max(len(ids[0]), len(ids[1]))
    differing = [i for i in range(count) if _at(ids[0], i) != _at(ids[1], i)]
    if not differing:
        return []
    with tempfile.TemporaryDirectory(prefix="envkit-diff-") as folder:
        one, two = (_saved(client, ref, Path(folder)) for ref in (left, right))
        with one.archive, two.archive:
            return [
                LayerChange(
                    i + 1,
                    _at(one.steps, i) or _at(two.steps, i) or "",
                    _at(ids[0], i),
                    _at(ids[1], i),
                    _files(_layer_files(one, i), _layer_files(two, i), (left, right)),
                )
                for i in differing
            ]


def _at(items: list[str], index: int) -> str | None:
    return items[index] if index < len(items) else None


def _files(
    a: dict[str, Entry], b: dict[str, Entry], names: tuple[str, str]
) -> tuple[FileChange, ...]:
    found = ((path, _what(a.get(path), b.get(path), names)) for path in sorted(set(a) | set(b)))
    return tuple(FileChange(path, what) for path, what in found if what is not None)
