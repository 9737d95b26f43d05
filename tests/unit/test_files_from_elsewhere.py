"""Files from elsewhere are data, never code: a corpus of hostile and sloppy inputs per surface
(lock files, history imports, pod logs, reports, target lists), each through the real CLI.
Every case ends in a clear refusal (exit 2, the line and field named) or a warning, never a
traceback, a hang or a control character reaching the terminal; nothing is written on refusal.
The lock-injection class is also tried for real in a container (tests/e2e/test_lock.py)."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from envkit.checks.programs.lockfile import Lock, empty_lock, format_lock
from envkit.cluster.k8s import MARKER
from envkit.history.store import History
from tests.helpers import envkit

DEADLINE_S = 60  # every refusal comes at once; a hang fails the test
HEX = "1" * 64


def refused(done: Any, *phrases: str) -> str:
    said = done.stdout + done.stderr
    assert done.returncode == 2, said
    assert "Traceback" not in said, said
    assert "\x1b" not in said, "a control character reached the terminal"
    for phrase in phrases:
        assert phrase in said, said
    return str(said)


def good_lock() -> Lock:
    lock = empty_lock()
    lock["base"] = {
        "image": ("envkit-test/debian:bookworm",), "id": (f"sha256:{HEX}",), "digest": ("-",),
        "arch": ("amd64",), "conda-prefix": ("-",),
    }  # fmt: skip
    lock["requested"] = {"apt:git": (), "pip:tqdm": (), "python:venv": ()}
    lock["apt"] = {"git:amd64": ("1:2.39.5-0+deb12u2", "added")}
    lock["pip"] = {"tqdm": ("4.67.1", "pip", f"sha256:{'a' * 64}")}
    lock["conda"] = {
        "numpy": ("1.26.4-py311_0", f"https://conda.anaconda.org/conda-forge/linux-64/numpy-1.26.4-py311_0.conda#{'c' * 32}"),
    }  # fmt: skip
    lock["torch"] = {"torch": ("2.5.1",), "cuda": ("12.4",), "cudnn": ("-",), "nccl": ("-",)}
    return lock


# (case, section, key, values, phrase): one entry replaced in a good lock.
HOSTILE_LOCKS = [
    ("apt option as a package", "apt", "-oDPkg::Pre-Invoke::=touch${IFS}/tmp/x:amd64", ("1.0", "added"), "is not a Debian package"),
    ("apt option as a version", "apt", "git:amd64", ("-oAPT::Get::AllowUnauthenticated=1", "added"), "is not a Debian version"),
    ("apt unknown origin", "apt", "git:amd64", ("1.0", "evil"), "is not base or added"),
    ("pip option as a name", "pip", "--index-url=http://evil.example/simple", ("1.0", "pip", "-"), "is not a package name"),
    ("pip -r as a name", "pip", "-r", ("/etc/passwd", "pip", "-"), "is not a package name"),
    ("pip URL as a version", "pip", "tqdm", ("@https://evil.example/tqdm.whl", "pip", "-"), "is not an exact version"),
    ("pip marker in a version", "pip", "tqdm", ('4.67.1;sys_platform=="win32"', "pip", "-"), "is not an exact version"),
    ("pip range as a version", "pip", "tqdm", (">=4", "pip", "-"), "is not an exact version"),
    ("pip option as sums", "pip", "tqdm", ("4.67.1", "pip", "--hash=sha256:x"), "sums"),
    ("pip short hash", "pip", "tqdm", ("4.67.1", "pip", "sha256:abc"), "sums"),
    ("base by name only", "base", "digest", ("envkit-test/debian:bookworm",), "NAME@sha256"),
    ("base digest with a backslash", "base", "digest", (f"debian@sha256:{HEX}\\",), "NAME@sha256"),
    ("base another image", "base", "digest", (f"evil/image@sha256:{HEX}",), "another image"),
    ("base id not a digest", "base", "id", ("latest",), "sha256:<64 hex>"),
    ("base image an option", "base", "image", ("--privileged",), "is not an image name"),
    ("conda over plain http", "conda", "numpy", ("1.26.4-py311_0", f"http://conda.anaconda.org/conda-forge/linux-64/numpy-1.26.4-py311_0.conda#{'c' * 32}"), "https URL"),
    ("conda a script, not a package", "conda", "numpy", ("1.26.4-py311_0", "https://evil.example/install.sh"), "https URL"),
    ("conda version an option", "conda", "numpy", ("--override-channels", "-"), "version-build"),
    ("torch unknown entry", "torch", "LD_PRELOAD", ("/tmp/x.so",), "has no entry"),
    ("control character", "apt", "git:amd64", ("1.0\x1b[2J", "added"), "is not a Debian version"),
]  # fmt: skip


def _write_lock(path: Path, section: str, key: str, values: tuple[str, ...]) -> Path:
    lock = good_lock()
    lock[section] = {k: v for k, v in lock[section].items() if section != "apt" or k != key}
    lock[section][key] = values
    path.write_text(format_lock(lock))
    return path


@pytest.mark.parametrize(
    ("case", "section", "key", "values", "phrase"), HOSTILE_LOCKS, ids=[c[0] for c in HOSTILE_LOCKS]
)
def test_a_lock_entry_that_could_act_is_refused_by_diff_and_build_locked(
    case: str, section: str, key: str, values: tuple[str, ...], phrase: str, tmp_path: Path
) -> None:
    hostile = _write_lock(tmp_path / "envkit.lock", section, key, values)
    fine = tmp_path / "fine.lock"
    fine.write_text(format_lock(good_lock()))
    line = next(
        n for n, text in enumerate(hostile.read_text().splitlines(), 1) if text.split(" ")[0] == key
    )
    said = refused(
        envkit("diff", str(hostile), str(fine), cwd=tmp_path, timeout=DEADLINE_S), phrase
    )
    assert f"{hostile}:{line}:" in said, said
    (tmp_path / "envkit.yaml").write_text(
        "name: hostile\nruntime:\n  gpus: none\nssh:\n  allow_no_keys: true\n"
    )
    # No engine is reachable: a refusal with exit 2 (not 3) shows the lock was judged first.
    env = {"DOCKER_HOST": "unix:///nonexistent/docker.sock"}
    built = envkit("build", "--locked", cwd=tmp_path, env=env, timeout=DEADLINE_S)
    refused(built, phrase, "a lock is data")
    assert not (tmp_path / ".envkit").exists(), "nothing rendered from a refused lock"


@pytest.mark.parametrize("kind", ["fifo", "device", "directory", "huge", "not utf-8"])
def test_a_lock_that_is_no_regular_small_text_file_is_refused_at_once(
    kind: str, tmp_path: Path
) -> None:
    path = tmp_path / "envkit.lock"
    if kind == "fifo":
        os.mkfifo(path)  # reading it would block forever
    elif kind == "device":
        path = Path("/dev/zero")  # reading it would never end
    elif kind == "directory":
        path.mkdir()
    elif kind == "huge":
        with path.open("wb") as handle:
            handle.truncate(64 * 1024 * 1024)
    else:
        path.write_bytes(b"schema 1\n[apt]\ngit:amd64 \xff\xfe added\n")
    fine = tmp_path / "fine.lock"
    fine.write_text(format_lock(good_lock()))
    done = envkit("diff", str(path), str(fine), cwd=tmp_path, timeout=DEADLINE_S)
    refused(done, str(path))
    if kind == "fifo":
        assert stat.S_ISFIFO(path.stat().st_mode)


def test_a_good_lock_still_diffs(tmp_path: Path) -> None:
    left, right = tmp_path / "a.lock", tmp_path / "b.lock"
    left.write_text(format_lock(good_lock()))
    changed = good_lock()
    changed["pip"]["tqdm"] = ("4.66.0", "pip", "-")
    right.write_text(format_lock(changed))
    done = envkit("diff", str(left), str(right), cwd=tmp_path, timeout=DEADLINE_S)
    assert done.returncode == 1 and "4.67.1" in done.stdout and "4.66.0" in done.stdout, done


# ---------------------------------------------------------------- history imports


def _export_line(**changes: Any) -> str:
    row: dict[str, Any] = {
        "uid": "run-1", "started_at": "2026-11-24T00:00:00Z", "target": "local://",
        "state": "passed", "duration_s": 1.5, "image_id": None, "gpu_model": None, "gpu_count": 0,
        "host": "h", "environment": {"torch": "2.5.1"},
        "summary": {"pass": 1, "fail": 0, "skip": 0, "error": 0},
        "checks": [{"id": "bench.cpu_matmul", "status": "pass", "duration_s": 0.1, "message": "",
                    "metrics": [{"name": "cpu_matmul_vs_python", "value": 3.0, "unit": "x"}]}],
    }  # fmt: skip
    row.update(changes)
    return json.dumps(row)


def _bad_metric(value: str) -> str:
    good = _export_line()
    return good.replace('"value": 3.0', f'"value": {value}')


HOSTILE_IMPORTS = [
    ("a string where a figure belongs", _bad_metric('"fast"'), "checks[0].metrics[0].value: expected a number"),
    ("NaN", _bad_metric("NaN"), "NaN is not a JSON number"),
    ("infinity", _bad_metric("Infinity"), "Infinity is not a JSON number"),
    ("an overflowing float", _bad_metric("1e400"), "is not a finite figure"),
    ("a huge integer", _bad_metric("1" + "0" * 400), "too large"),
    ("a missing field", _export_line(uid=None), "uid: expected text"),
    ("a wrong type", _export_line(checks={"not": "a list"}), "checks: expected a list"),
    ("an unknown status", _export_line(checks=[{"id": "x.y", "status": "great", "duration_s": 0, "message": "", "metrics": []}]), "checks[0].status"),
    ("a lone surrogate", _export_line().replace('"local://"', '"local://\\ud800"'), "lone surrogate"),
    ("deep nesting", _export_line().replace('{"torch": "2.5.1"}', "[" * 100000 + "]" * 100000), "nested too deeply"),
    ("not JSON", "{not json", "not JSON"),
    ("a JSON list", "[1, 2, 3]", "expected an object"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("case", "line", "phrase"), HOSTILE_IMPORTS, ids=[c[0] for c in HOSTILE_IMPORTS]
)
def test_a_bad_import_line_imports_nothing_and_names_line_and_field(
    case: str, line: str, phrase: str, tmp_path: Path
) -> None:
    db = tmp_path / "h.sqlite3"
    source = tmp_path / "runs.jsonl"
    source.write_text(
        _export_line(uid="good-1") + "\n" + _export_line(uid="good-2") + "\n" + line + "\n"
    )
    done = envkit(
        "history",
        "import",
        str(source),
        "--history-file",
        str(db),
        cwd=tmp_path,
        timeout=DEADLINE_S,
    )
    refused(done, f"{source}:3:", phrase, "nothing was imported")
    assert History(db).runs(limit=10) == [], "all or nothing: the two good lines were not kept"


@pytest.mark.parametrize("kind", ["device", "fifo", "directory"])
def test_an_import_source_that_is_not_a_file_is_refused_at_once(kind: str, tmp_path: Path) -> None:
    source = {"device": Path("/dev/zero"), "fifo": tmp_path / "pipe", "directory": tmp_path}[kind]
    if kind == "fifo":
        os.mkfifo(source)
    done = envkit(
        "history",
        "import",
        str(source),
        "--history-file",
        str(tmp_path / "h.db"),
        cwd=tmp_path,
        timeout=DEADLINE_S,
    )
    refused(done)


def test_export_into_a_directory_or_a_full_disk_is_a_clear_error(tmp_path: Path) -> None:
    import resource
    import subprocess
    import sys

    db = tmp_path / "h.sqlite3"
    history = History(db)
    history.record(json.loads(_export_line()) | {"environment": {"torch": "x" * 200_000}}, "r1")
    history.close()  # checkpointed: reading it later writes nothing but SQLite's 32 KiB -shm
    done = envkit(
        "history",
        "export",
        str(tmp_path),
        "--history-file",
        str(db),
        cwd=tmp_path,
        timeout=DEADLINE_S,
    )
    refused(done, "cannot write")

    def small_files() -> None:  # a full disk as the process sees it: writes past 64 KiB fail
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))

    out = tmp_path / "runs.jsonl"
    full = subprocess.run(
        [sys.executable, "-m", "envkit", "history", "export", str(out), "--history-file", str(db)],
        capture_output=True, text=True, preexec_fn=small_files, timeout=DEADLINE_S, check=False,
    )  # fmt: skip
    refused(full, "cannot write")
    assert not out.exists(), "no half-written export left behind"


def test_huge_run_ids_and_limits_are_refused(tmp_path: Path) -> None:
    db = str(tmp_path / "h.sqlite3")
    refused(
        envkit("history", "diff", "1", str(2**70), "--history-file", db, cwd=tmp_path),
        "cannot exist",
    )
    refused(envkit("history", "--limit", str(10**30), "--history-file", db, cwd=tmp_path))
    refused(envkit("history", "--limit", "0", "--history-file", db, cwd=tmp_path), "--limit 0")


def test_imported_control_characters_are_shown_escaped(tmp_path: Path) -> None:
    db = tmp_path / "h.sqlite3"
    source = tmp_path / "runs.jsonl"
    source.write_text(_export_line(target="local://\x1b]0;pwned\x07\x1b[2J") + "\n")
    imported = envkit("history", "import", str(source), "--history-file", str(db), cwd=tmp_path)
    assert imported.returncode == 0, imported.stderr
    listed = envkit("history", "--history-file", str(db), cwd=tmp_path)
    assert listed.returncode == 0 and "\x1b" not in listed.stdout and "\\x1b" in listed.stdout


# ---------------------------------------------------------------- a damaged history file


def _verify(tmp_path: Path, db: Path) -> Any:
    return envkit(
        "verify", "--local", "--python", "/usr/bin/python3", "--only", "system.shm", "-q",
        "--history-file", str(db), "--json-file", str(tmp_path / "r.json"),
        "--junit", str(tmp_path / "r.xml"), cwd=tmp_path, timeout=300,
    )  # fmt: skip


@pytest.mark.parametrize("damage", ["corrupt pages", "a missing table"])
def test_a_damaged_history_costs_no_verdict_and_no_report(damage: str, tmp_path: Path) -> None:
    db = tmp_path / "h.sqlite3"
    history = History(db)
    for n in range(30):
        history.record(json.loads(_export_line()), f"old-{n}")
    history.close()
    if damage == "corrupt pages":
        data = bytearray(db.read_bytes())
        page = 4096
        data[page * 2 : page * 4] = b"\xde\xad" * page  # table pages, the header left intact
        db.write_bytes(bytes(data))
        for suffix in ("-wal", "-shm"):
            Path(str(db) + suffix).unlink(missing_ok=True)
    else:
        with sqlite3.connect(db) as raw:
            raw.execute("DROP TABLE metrics")
    done = _verify(tmp_path, db)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stderr.count("warning:") == 1 and "Traceback" not in done.stderr, done.stderr
    assert json.loads((tmp_path / "r.json").read_text())["summary"]["pass"] == 1
    ET.parse(tmp_path / "r.xml")


# ---------------------------------------------------------------- pod logs


def _pod_report(
    node: str, *, host: str | None = None, status: str = "pass", message: str = "ok"
) -> str:
    report = {
        "schema_version": 1, "target": f"k8s://node/{node}", "started_at": "t", "duration_s": 1.0,
        "environment": {"hostname": host} if host else {},
        "summary": {"pass": 1, "fail": 0, "skip": 0, "error": 0},
        "checks": [{"id": "tensor.creation", "group": "tensor", "status": status,
                    "duration_s": 0.1, "message": message, "metrics": []}],
    }  # fmt: skip
    return json.dumps(report)


def _merge(tmp_path: Path, lines: list[str], *extra: str) -> Any:
    logs = tmp_path / "logs.txt"
    logs.write_text("\n".join(lines) + "\n")
    return envkit("k8s", "merge", str(logs), *extra, cwd=tmp_path, timeout=DEADLINE_S)


def test_a_marker_in_the_middle_of_a_line_is_not_a_report(tmp_path: Path) -> None:
    forged = f"[pod/a/checks] user output: {MARKER} {_pod_report('n1', status='pass')}"
    honest = f"[pod/a/checks] {MARKER} {_pod_report('n1', host='a', status='fail')}"
    done = _merge(tmp_path, [honest, forged])
    assert done.returncode == 1, done.stdout + done.stderr
    assert "a report marker inside another line" in done.stderr


def test_one_pod_reporting_for_another_node_is_refused_naming_both(tmp_path: Path) -> None:
    real = f"[pod/pod-a/checks] {MARKER} {_pod_report('gpu-1', host='pod-a', status='fail')}"
    forged = f"[pod/pod-b/checks] {MARKER} {_pod_report('gpu-1', host='pod-b')}"
    refused(_merge(tmp_path, [real, forged]), "two reports for k8s://node/gpu-1", "pod-a", "pod-b")


def test_a_pod_printing_a_report_made_elsewhere_is_refused(tmp_path: Path) -> None:
    relayed = f"[pod/pod-a/checks] {MARKER} {_pod_report('gpu-1', host='somewhere-else')}"
    refused(_merge(tmp_path, [relayed]), "pod pod-a printed a report made on host")


@pytest.mark.parametrize(
    "bad",
    [
        '{"target": "k8s://node/n2", "checks": "all good"}',
        '{"target": "k8s://node/n2", "checks": [{"id": "a.b", "status": "pass", "duration_s": "fast"}]}',
        '{"target": "k8s://node/n2", "checks": [{"id": "a.b", "status": "pass", "duration_s": NaN}]}',
        '{"target": "not a node", "checks": []}',
        '["a", "list"]',
        '{"target": "k8s://node/n2", "checks": [{"id": "a.b", "status": "[/]great"}]}',
        # an integer of 400 digits: valid JSON, too large for any float
        '{"target": "k8s://node/n2", "checks": [{"id": "a.b", "status": "pass", "duration_s": '
        + "9" * 400
        + "}]}",
    ],
)
def test_a_malformed_report_is_skipped_with_a_reason(bad: str, tmp_path: Path) -> None:
    good = f"[pod/a/checks] {MARKER} {_pod_report('n1', host='a')}"
    done = _merge(
        tmp_path, [good, f"[pod/b/checks] {MARKER} {bad}"], "--json-file", str(tmp_path / "m.json")
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 marked line(s) skipped" in done.stderr and "Traceback" not in done.stderr
    assert json.loads((tmp_path / "m.json").read_text())["summary"]["targets"] == 1


def test_control_characters_in_a_report_reach_no_terminal_and_break_no_xml(tmp_path: Path) -> None:
    nasty = "\x1b]0;owned\x07\x1b[2J\x00\x08 [/] [bold]markup[/bold] <x> & \ud7ff \x9b"
    line = f"[pod/a/checks] {MARKER} {_pod_report('n1', host='a', status='fail', message=nasty)}"
    junit, page = tmp_path / "r.xml", tmp_path / "r.html"
    done = _merge(tmp_path, [line], "--junit", str(junit), "--html", str(page))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "\x1b" not in done.stdout + done.stderr and "Traceback" not in done.stderr
    assert "\\x1b" in done.stdout, "shown escaped, not dropped"
    root = ET.parse(junit).getroot()
    assert "\\x1b" in (root.find(".//failure").text or "")  # type: ignore[union-attr]
    assert "\x1b" not in page.read_text() and "\x00" not in page.read_text()


# ---------------------------------------------------------------- target lists


@pytest.mark.parametrize(
    ("url", "phrase"),
    [
        ("ssh://dev@[::1", "Invalid IPv6 URL"),
        ("ssh://dev@-oProxyCommand=touch${IFS}/tmp/x", "is not a host name"),
        ("ssh://-oProxyCommand=x@host", "is not a login name"),
    ],
)
def test_a_malformed_target_is_refused_before_anything_runs(
    url: str, phrase: str, tmp_path: Path
) -> None:
    listed = tmp_path / "targets.txt"
    listed.write_text(f"local://\n{url}\n")
    refused(
        envkit("verify", "--targets", str(listed), cwd=tmp_path, timeout=DEADLINE_S),
        f"{listed}:2",
        phrase,
    )
    refused(envkit("verify", "--target", url, cwd=tmp_path, timeout=DEADLINE_S), phrase)


def test_a_targets_file_that_is_a_device_is_refused(tmp_path: Path) -> None:
    refused(
        envkit("verify", "--targets", "/dev/zero", cwd=tmp_path, timeout=DEADLINE_S),
        "not a regular file",
    )
