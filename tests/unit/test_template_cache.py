"""Compiled templates are kept between runs (Jinja2's bytecode cache in the user's own folder):
a second render compiles nothing, a changed template is compiled again, and a cache that is
unsafe, broken or switched off is no cache, never a failed render."""

from __future__ import annotations

import os
from pathlib import Path

import jinja2
import pytest

from envkit.render.files import make_environment
from envkit.render.template_cache import OFF_ENV, template_cache


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ENVKIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv(OFF_ENV, raising=False)
    return tmp_path / "cache" / "templates"


def _no_compiling(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a template was compiled although the cache holds it")

    monkeypatch.setattr(jinja2.Environment, "compile", refuse)


def test_a_second_environment_compiles_nothing(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = make_environment().get_template("Dockerfile.j2")
    assert cache_dir.is_dir() and oct(cache_dir.stat().st_mode & 0o777) == "0o700"
    assert [p.suffix for p in cache_dir.iterdir()] == [".jinja-cache"]
    _no_compiling(monkeypatch)
    second = make_environment().get_template("Dockerfile.j2")
    assert first.filename == second.filename


def _env_on(folder: Path) -> jinja2.Environment:
    return jinja2.Environment(  # noqa: S701 - text templates, as envkit's are
        loader=jinja2.FileSystemLoader(str(folder)), bytecode_cache=template_cache()
    )


def test_a_changed_template_is_compiled_again(cache_dir: Path, tmp_path: Path) -> None:
    templates = tmp_path / "t"
    templates.mkdir()
    (templates / "a.j2").write_text("one {{ x }}")
    assert _env_on(templates).get_template("a.j2").render(x=1) == "one 1"
    (templates / "a.j2").write_text("two {{ x }}")
    assert _env_on(templates).get_template("a.j2").render(x=1) == "two 1"
    # One entry per template; the source's checksum inside it said the code was stale.
    assert len(list(cache_dir.iterdir())) == 1


def test_a_broken_cache_file_is_a_miss(cache_dir: Path, tmp_path: Path) -> None:
    templates = tmp_path / "t"
    templates.mkdir()
    (templates / "a.j2").write_text("{{ x }}!")
    _env_on(templates).get_template("a.j2")
    for entry in cache_dir.iterdir():
        entry.write_bytes(b"j2\x00garbage")
    assert _env_on(templates).get_template("a.j2").render(x=3) == "3!"


def test_a_folder_others_can_write_is_never_used(cache_dir: Path) -> None:
    cache_dir.mkdir(parents=True)
    os.chmod(cache_dir, 0o777)  # noqa: PTH101, S103 - the unsafe folder under test
    assert template_cache() is None
    os.chmod(cache_dir, 0o700)  # noqa: PTH101
    assert template_cache() is not None


def test_a_folder_that_cannot_be_made_is_no_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("ENVKIT_CACHE_DIR", str(blocker))
    assert template_cache() is None
    assert make_environment().get_template("pip.conf.j2") is not None


def test_switched_off_it_compiles_every_time(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(OFF_ENV, "1")
    assert template_cache() is None
    make_environment().get_template("pip.conf.j2")
    assert not cache_dir.exists()
