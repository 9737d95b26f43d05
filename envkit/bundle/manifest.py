"""A bundle's manifest: the sha256 and size of every file, written last (a folder without one
is a partial bundle), and checked before anything in the bundle is loaded or run: a file
changed, missing or added is refused by name; a link, or a name that leaves the folder, too."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from envkit.errors import EnvkitError
from envkit.files import sha256_of, write_atomically

MANIFEST = "MANIFEST.json"
SIGNATURE = MANIFEST + ".sig"  # cosign's signature of the manifest (`envkit bundle --sign`)
STATEMENTS = ("envkit.lock", "sbom.cdx.json", "provenance.json")  # what every bundle says of itself
FORMAT = "envkit-bundle/1"


@dataclass(frozen=True)
class Entry:
    path: str  # relative, POSIX
    size: int
    sha256: str


def _files(folder: Path) -> dict[str, Path]:
    """Every entry under FOLDER but the manifest, by relative name; a link or a special file is
    refused (a bundle is plain files, so nothing in it can point outside it)."""
    found = {}
    for path in sorted(folder.rglob("*")):
        name = path.relative_to(folder).as_posix()
        if path.is_symlink() or not (path.is_file() or path.is_dir()):
            raise EnvkitError(
                f"{folder}: {name} is a link or a special file",
                "a bundle holds plain files only: make it again with `envkit bundle`",
            )
        if path.is_file() and name not in (MANIFEST, SIGNATURE):
            found[name] = path
    return found


def write_manifest(folder: Path, made_from: dict[str, str]) -> list[Entry]:
    """The manifest of everything in FOLDER, written last."""
    entries = [Entry(n, p.stat().st_size, sha256_of(p)) for n, p in _files(folder).items()]
    document = {
        "format": FORMAT,
        "made_from": made_from,
        "files": [{"path": e.path, "size": e.size, "sha256": e.sha256} for e in entries],
    }
    write_atomically(folder / MANIFEST, json.dumps(document, indent=2, sort_keys=True) + "\n")
    return entries


def _listed(folder: Path) -> dict[str, Entry]:
    path = folder / MANIFEST
    if not path.is_file():
        raise EnvkitError(
            f"{folder} is a partial bundle: it has no {MANIFEST} (an interrupted copy, or a "
            "folder `envkit bundle` did not finish)",
            "copy the whole bundle again; `envkit bundle` writes the manifest last",
        )
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        if document.get("format") != FORMAT:
            raise ValueError(document.get("format"))
        rows = document["files"]
        listed = {r["path"]: Entry(r["path"], int(r["size"]), str(r["sha256"])) for r in rows}
    except (ValueError, KeyError, TypeError):
        raise EnvkitError(
            f"{path} is not an envkit bundle's manifest", "make the bundle again"
        ) from None
    for name in listed:
        pure = PurePosixPath(name)
        if pure.is_absolute() or ".." in pure.parts or not name:
            raise EnvkitError(f"{path}: {name!r} leaves the bundle's folder", "make it again")
    return listed


def check_bundle(folder: Path, key: str | None = None, *needs: str) -> dict[str, Entry]:
    """FOLDER's files, each the size and sum its manifest says, and nothing else, NEEDS among
    them; with KEY (signing.verify), the manifest signed by it first, so no file can be swapped
    with it."""
    if not folder.is_dir():
        raise EnvkitError(f"{folder} is not a folder", "name the folder `envkit bundle -o` made")
    if key is not None and (folder / MANIFEST).is_file():
        from envkit.supply.cosign import verify_blob

        verify_blob(folder / MANIFEST, Path(key))
    listed, present = _listed(folder), _files(folder)
    problems = [f"{name}: missing" for name in sorted(set(listed) - set(present))]
    problems += [f"{name}: not in the manifest" for name in sorted(set(present) - set(listed))]
    for name in sorted(set(listed) & set(present)):
        size = present[name].stat().st_size
        if size != listed[name].size:
            said = "cut short (a partial copy)" if size < listed[name].size else "grown"
            problems.append(f"{name}: {size} bytes, the manifest says {listed[name].size}: {said}")
        elif sha256_of(present[name]) != listed[name].sha256:
            problems.append(f"{name}: changed (its sha256 is not the manifest's)")
    if not problems:
        problems = _statements_disagree(folder, listed)
    if problems:
        raise EnvkitError(
            f"{folder} is not the bundle its manifest describes:\n  " + "\n  ".join(problems),
            "nothing was loaded or run; copy the bundle again from where it was made",
        )
    if key is None and (folder / SIGNATURE).is_file():
        sys.stderr.write(
            f"warning: {folder}'s manifest is signed, but nothing here checks the signature: "
            "set signing.verify to the team's cosign.pub\n"
        )
    if missing := [name for name in needs if name not in listed]:
        raise EnvkitError(f"{folder} carries no {missing[0]}", "make it with `envkit bundle`")
    return listed


def _statements_disagree(folder: Path, listed: dict[str, Entry]) -> list[str]:
    """What a bundle says of itself: the lock, its SBOM and the provenance all there, and the
    provenance naming this very lock (a lock swapped with a manifest made anew is caught by the
    signature; this catches a bundle put together from two builds)."""
    if problems := [f"{name}: missing" for name in STATEMENTS if name not in listed]:
        return problems
    try:
        made = json.loads((folder / "provenance.json").read_text(encoding="utf-8"))
        said = made["buildDefinition"]["externalParameters"]["lock"]["sha256"]
    except (ValueError, KeyError, TypeError):
        return ["provenance.json: not an envkit provenance (no lock digest)"]
    if said != listed["envkit.lock"].sha256:
        return [f"provenance.json names lock sha256 {said}, not this bundle's envkit.lock"]
    return []
