"""envkit.lock without an engine: the format round-trips and refuses what it cannot read, drift
names every change, a lock becomes the pins a locked build renders (and is refused when it no
longer fits envkit.yaml), and pip's sums are read from a real index server (PEP 503 page and
PEP 691 JSON, served over loopback)."""

from __future__ import annotations

import dataclasses
import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from envkit.checks.programs.lockfile import (
    Lock,
    LockFormatError,
    describe,
    drift,
    empty_lock,
    format_lock,
    parse_lock,
)
from envkit.errors import EnvkitError
from envkit.lock.hashes import fill_hashes, hashes_for
from envkit.lock.pins import locked_plan, read_lock
from envkit.lock.requested import inputs_digest, requested
from envkit.plan import Plan
from envkit.render.files import render_files
from tests.helpers import plan_example


def _lock() -> Lock:
    lock = empty_lock()
    lock["base"] = {
        "image": ("envkit-test/debian:bookworm",),
        "id": ("sha256:" + "1" * 64,),
        "digest": ("-",),
        "arch": ("amd64",),
        "conda-prefix": ("-",),
    }
    lock["apt"] = {
        "git:amd64": ("1:2.39.5-0+deb12u2", "added"),
        "libc6:amd64": ("2.36-9+deb12u10", "base"),
        "libfoo:i386": ("1.0-1", "added"),
        "tzdata:all": ("2025b-0+deb12u1", "added"),
    }
    lock["pip"] = {
        "tqdm": ("4.67.1", "pip", "sha256:" + "a" * 64 + ",sha256:" + "b" * 64),
        "numpy": ("1.24.2", "debian", "-"),
    }
    lock["torch"] = {"torch": ("2.5.1",), "cuda": ("12.4",), "cudnn": ("-",), "nccl": ("-",)}
    return lock


def test_the_format_round_trips_sorted_and_ignores_comments() -> None:
    lock = _lock()
    text = format_lock(lock, ("made for a test",))
    assert text.startswith("# made for a test\nschema 1\n")
    assert parse_lock(text) == {section: dict(entries) for section, entries in lock.items()}
    apt = text.split("[apt]\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert apt == sorted(apt)
    assert format_lock(parse_lock(text)) == format_lock(lock)  # comments aside, identical


@pytest.mark.parametrize(
    ("text", "phrase"),
    [
        ("", "no 'schema' line"),
        ("schema 2\n", "another envkit version"),
        ("schema 1\n[apt]\ngit:amd64 1.0\n", "entries have 3 fields"),
        ("schema 1\n[nonsense]\n", "unknown section [nonsense]"),
        ("schema 1\ngit:amd64 1.0 added\n", "before any [section]"),
        ("schema 1\n[pip]\ntqdm 1 pip -\ntqdm 2 pip -\n", "tqdm appears twice"),
    ],
)
def test_unreadable_locks_are_refused_naming_the_line(text: str, phrase: str) -> None:
    with pytest.raises(LockFormatError, match=None) as raised:
        parse_lock(text)
    assert phrase in str(raised.value)


def test_a_token_with_blanks_cannot_be_written() -> None:
    lock = _lock()
    lock["pip"]["bad"] = ("1 2", "pip", "-")
    with pytest.raises(LockFormatError, match="is not one token"):
        format_lock(lock)


def test_drift_names_changes_removals_and_additions() -> None:
    before, after = _lock(), _lock()
    after["apt"]["git:amd64"] = ("1:2.39.2-1", "-")
    del after["apt"]["tzdata:all"]
    after["pip"]["rich"] = ("13.0", "pip", "-")
    after["torch"]["torch"] = ("2.6.0",)
    changes = drift(before, after)
    assert changes == [
        ("torch", "torch", "2.5.1", "2.6.0"),
        ("apt", "git:amd64", "1:2.39.5-0+deb12u2", "1:2.39.2-1"),
        ("apt", "tzdata:all", "2025b-0+deb12u1", "-"),
        ("pip", "rich", "-", "13.0"),
    ]
    text = describe(changes)
    assert "apt tzdata:all 2025b-0+deb12u1 removed" in text and "pip rich 13.0 added" in text
    assert drift(before, _lock()) == []


def _lock_of(plan: Plan) -> Lock:
    """The test lock, made from PLAN's config and on its base."""
    lock = _lock()
    lock["requested"] = requested(plan)
    lock["base"]["image"] = (plan.image.base,)
    return lock


def _locked_file(tmp_path: Path, lock: Lock) -> Path:
    path = tmp_path / "envkit.lock"
    path.write_text(format_lock(lock))
    return path


def test_a_lock_becomes_the_pins_a_locked_build_renders(tmp_path: Path) -> None:
    plan = plan_example("debian-bookworm-cpu")
    path = _locked_file(tmp_path, _lock_of(plan))
    parsed, text = read_lock(path)
    locked = locked_plan(parsed, text, plan, path)
    # only what the build added; the native and `all` architectures spelled without a suffix
    assert locked.apt == ("git=1:2.39.5-0+deb12u2", "libfoo:i386=1.0-1", "tzdata=2025b-0+deb12u1")
    assert locked.pip == (f"tqdm==4.67.1 --hash=sha256:{'a' * 64} --hash=sha256:{'b' * 64}",)
    assert locked.pip_hashed and locked.base == plan.image.base
    files = render_files(dataclasses.replace(plan, locked=locked))
    dockerfile = files["Dockerfile"]
    assert "'git=1:2.39.5-0+deb12u2'" in dockerfile or "git=1:2.39.5-0+deb12u2" in dockerfile
    assert "--no-deps --require-hashes" in dockerfile
    assert files["envkit/lock/pip-requirements.txt"].startswith("tqdm==4.67.1 --hash=")
    assert files["envkit/runtime/envkit.lock"] == text
    assert "/etc/envkit/envkit.lock" in dockerfile
    # The classic builder's Dockerfile pins the same, without BuildKit's cache mounts.
    classic = files["Dockerfile.classic"]
    assert "git=1:2.39.5-0+deb12u2" in classic and "--no-deps --require-hashes" in classic
    assert "--mount=" not in classic and "/etc/envkit/envkit.lock" in classic


def test_without_sums_the_pins_stay_exact_but_hashes_are_not_required(tmp_path: Path) -> None:
    plan = plan_example("debian-bookworm-cpu")
    lock = _lock()
    lock["requested"] = requested(plan)
    lock["pip"]["tqdm"] = ("4.67.1", "pip", "record:" + "c" * 64)
    lock["base"]["image"] = ("debian:bookworm",)
    lock["base"]["digest"] = ("debian@sha256:" + "d" * 64,)
    path = _locked_file(tmp_path, lock)
    locked = locked_plan(*read_lock(path), plan, path)
    assert locked.pip == ("tqdm==4.67.1",) and not locked.pip_hashed
    assert locked.base == "debian@sha256:" + "d" * 64
    dockerfile = render_files(dataclasses.replace(plan, locked=locked))["Dockerfile"]
    assert f"FROM debian@sha256:{'d' * 64}" in dockerfile
    assert "--require-hashes" not in dockerfile


def test_a_lock_made_for_another_config_is_refused_naming_the_change(tmp_path: Path) -> None:
    plan = plan_example("debian-bookworm-cpu")
    lock = _lock()
    lock["requested"] = requested(plan)
    del lock["requested"][f"apt:{plan.packages.apt[-1]}"]
    lock["requested"]["pip:rich==13.0"] = ()
    path = _locked_file(tmp_path, lock)
    with pytest.raises(EnvkitError) as raised:
        locked_plan(*read_lock(path), plan, path)
    text = f"{raised.value} {raised.value.fix}"
    assert f"asks for apt:{plan.packages.apt[-1]}" in text
    assert "no longer asks for pip:rich==13.0" in text and "envkit lock" in text


def test_the_inputs_digest_follows_the_requests_only() -> None:
    plan = plan_example("debian-bookworm-cpu")
    same = dataclasses.replace(plan, notes=("another note",))
    more = dataclasses.replace(
        plan, packages=dataclasses.replace(plan.packages, pip=(*plan.packages.pip, "rich"))
    )
    assert inputs_digest(plan) == inputs_digest(same) != inputs_digest(more)


def test_turning_the_notebook_on_after_the_lock_is_named() -> None:
    from envkit.plan.box.notebook import plan_notebook
    from tests.helpers import load_example

    plan = plan_example("debian-bookworm-cpu")
    spec = load_example("debian-bookworm-cpu").spec
    on = spec.model_copy(update={"notebook": spec.notebook.model_copy(update={"enabled": True})})
    with_notebook = dataclasses.replace(plan, notebook=plan_notebook(on))
    assert "notebook:jupyterlab==4.6.6" in requested(with_notebook)
    assert not any(k.startswith("notebook:") for k in requested(plan))
    assert inputs_digest(plan) != inputs_digest(with_notebook)


def test_read_lock_names_a_missing_or_broken_file(tmp_path: Path) -> None:
    with pytest.raises(EnvkitError, match="does not exist"):
        read_lock(tmp_path / "envkit.lock")
    (tmp_path / "envkit.lock").write_text("schema 1\n[pip]\nx\n")
    with pytest.raises(EnvkitError, match="entries have 4 fields"):
        read_lock(tmp_path / "envkit.lock")


# ------------------------------------------------------------------ sums from a real index


class _Index(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path == "/html/tqdm/":
            body = (
                '<a href="../../files/tqdm-4.67.1-py3-none-any.whl#sha256=' + "e" * 64 + '">w</a>'
                '<a href="/files/tqdm-4.67.1.tar.gz#sha256=' + "f" * 64 + '">s</a>'
                '<a href="/files/tqdm-4.66.0.tar.gz#sha256=' + "0" * 64 + '">old</a>'
            ).encode()
            kind = "text/html"
        elif self.path == "/json/torch/":
            files = [
                {
                    "filename": "torch-2.5.1+cu124-cp311-cp311-linux_x86_64.whl",
                    "hashes": {"sha256": "1" * 64},
                },
                {
                    "filename": "torch-2.5.1-cp311-cp311-linux_x86_64.whl",
                    "hashes": {"sha256": "2" * 64},
                },
            ]
            body, kind = (
                json.dumps({"files": files}).encode(),
                "application/vnd.pypi.simple.v1+json",
            )
        else:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def index() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Index)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_sums_come_from_the_first_index_that_serves_the_version(index: str) -> None:
    assert hashes_for((f"{index}/html",), "tqdm", "4.67.1") == [
        "sha256:" + "e" * 64,
        "sha256:" + "f" * 64,
    ]
    # PEP 691 JSON, and a local version label kept apart from the plain release
    assert hashes_for((f"{index}/missing", f"{index}/json"), "torch", "2.5.1+cu124") == [
        "sha256:" + "1" * 64
    ]
    assert hashes_for((f"{index}/html",), "tqdm", "9.9.9") == []


def test_fill_hashes_asks_only_for_pips_packages_and_names_the_unserved(index: str) -> None:
    packages: dict[str, tuple[str, ...]] = {
        "tqdm": ("4.67.1", "pip", "record:x"),
        "rich": ("13.0", "pip", "record:y"),
        "numpy": ("1.24.2", "debian", "-"),
    }
    filled, missing = fill_hashes(packages, (f"{index}/html",))
    assert filled["tqdm"][2] == f"sha256:{'e' * 64},sha256:{'f' * 64}"
    assert filled["rich"] == packages["rich"] and filled["numpy"] == packages["numpy"]
    assert missing == ["rich"]


def test_a_changed_project_file_is_another_request_the_lock_names() -> None:
    """A requirements file or a pyproject/uv.lock edited after `envkit lock` makes the lock stale
    (by content: the same path with another line is another request)."""
    from envkit.lock.requested import check_matches
    from envkit.plan.project.project_files import ProjectFile, RequirementsLayer

    plan = plan_example("debian-bookworm-cpu")

    def with_file(text: str) -> Plan:
        layer = RequirementsLayer("requirements.txt", (ProjectFile("requirements.txt", text),))
        return dataclasses.replace(
            plan, packages=dataclasses.replace(plan.packages, requirements=(layer,))
        )

    before, after = with_file("six==1.16.0\n"), with_file("six==1.17.0\n")
    assert inputs_digest(before) != inputs_digest(after)
    with pytest.raises(EnvkitError) as stale:
        check_matches(requested(before), after, "envkit.lock")
    assert "requirements:requirements.txt@" in str(stale.value)


def test_a_conda_url_is_https_or_from_a_configured_mirror_on_this_machines_loopback() -> None:
    from envkit.lock.validate import problems

    local = "http://127.0.0.1:8431/cloud/conda-forge"
    lock = _lock()
    lock["conda"] = {"zlib": ("1.3-h0", f"{local}/linux-64/zlib-1.3-h0.conda#" + "c" * 32)}
    assert problems(lock, (local,)) == []
    lock["conda"] = {"zlib": ("1.3-h0", "http://mirror.example/c/linux-64/zlib-1.3-h0.conda")}
    found = problems(lock, ("http://mirror.example/c",))
    assert [p.problem for p in found] == [
        "[conda] zlib URL 'http://mirror.example/c/linux-64/zlib-1.3-h0.conda' is not an https "
        "URL of a package file"
    ]
    lock["conda"] = {"zlib": ("1.3-h0", f"{local}/linux-64/zlib-1.3-h0.conda")}
    assert "from none of the configured channels" in problems(lock, ())[0].problem
