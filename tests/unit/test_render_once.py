"""One `envkit build` renders its context once: the files written, the inputs digest (the
registry's tag) and each platform's build steps all come from that one render. The engine is a
stand-in here (no build runs); what is counted is envkit's own rendering."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from envkit.commands import build
from envkit.engine.builders import Backend
from envkit.engine.facts import EngineFacts
from envkit.engine.registry import CONTEXT_LABEL
from envkit.render import files as render_files_module
from tests.helpers import copy_example


class _Progress:
    image_id = "sha256:" + "0" * 64


class _Images:
    def get(self, tag: str) -> Any:
        from docker.errors import ImageNotFound

        raise ImageNotFound(tag)


class _Client:
    images = _Images()


def _count_renders(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    real: Callable[..., dict[str, str]] = render_files_module.render_files
    calls: list[int] = []

    def counted(*args: Any, **kwargs: Any) -> dict[str, str]:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(render_files_module, "render_files", counted)
    monkeypatch.setattr("envkit.render.outputs.render_files", counted)
    return calls


@pytest.mark.parametrize("registry", [None, "registry.example:5000/team"])
def test_a_build_renders_its_context_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, registry: str | None
) -> None:
    config = copy_example("debian-bookworm-cpu", tmp_path)
    facts = EngineFacts(endpoint=_endpoint(), name="Docker Engine 20.10", podman=False,
                        runtimes=(), cdi_gpus=())  # fmt: skip
    built: list[str] = []
    monkeypatch.setattr(build, "docker_client", lambda: _Client())
    monkeypatch.setattr(build, "engine_facts", lambda client: facts)
    monkeypatch.setattr("envkit.engine.facts.engine_facts", lambda client: facts)
    monkeypatch.setattr(
        build,
        "choose_backend",
        lambda name, podman: Backend("buildkit", "the stand-in's choice"),
    )
    monkeypatch.setattr(build, "fetch_shared", lambda *args: None)  # the registry lacks it

    def no_build(client: Any, context: Path, options: Any, report: Any, backend: Any) -> Any:
        built.append(options.labels[CONTEXT_LABEL])
        return _Progress()

    monkeypatch.setattr(build, "build_image", no_build)
    calls = _count_renders(monkeypatch)
    request = build.BuildRequest(config=str(config), registry=registry, quiet=True)
    build.build_project(request)
    assert len(built) == 1, "the image was built once"
    assert len(calls) == 1, f"the context was rendered {len(calls)} times"
    assert (config.parent / ".envkit" / "Dockerfile").is_file(), "the one render was written"


def _endpoint() -> Any:
    from envkit.engine.endpoint import current_endpoint

    return current_endpoint()
