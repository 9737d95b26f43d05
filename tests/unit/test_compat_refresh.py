"""`envkit compat refresh` on recorded answers: the recording of 2026-11-26 (this machine reaches
PyPI only, so the wheel index and Docker Hub answered with errors, and those are recorded too),
and, for the two sources that could not be recorded here, synthetic answers written in each
source's published format (the tests that use them say so in their names)."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import yaml

from envkit.catalog.compat import cuda_of
from envkit.catalog.refresh import readings
from envkit.catalog.refresh.fetch import RecordingFetcher, ReplayFetcher, SourceUnavailableError
from envkit.catalog.refresh.merge import Readings, merge
from envkit.catalog.refresh.run import refresh
from tests.helpers import envkit

DATA = Path(__file__).parents[1] / "data" / "compat-refresh"
RECORDING = DATA / "2026-11-26"
TABLE = Path(__file__).parents[2] / "envkit" / "catalog" / "compat.yaml"


def test_the_shipped_table_is_what_its_sources_said() -> None:
    result = refresh(ReplayFetcher(RECORDING), TABLE.read_text(), "2026-11-26")
    assert result.diff == "", "compat.yaml differs from a refresh on its own recording"


def test_refresh_brings_the_wave_1_table_current() -> None:
    old = (DATA / "wave1-compat.yaml").read_text()
    result = refresh(ReplayFetcher(RECORDING), old, "2026-11-26")
    new = yaml.safe_load(result.text)
    torch = new["torch"]
    for release in ("2.12.0", "2.12.1", "2.13.0", "2.14.0", "2.14.1", "2.15.0"):
        assert release in torch and not torch[release]["confirmed"]
    assert torch["2.15.0"]["default_cuda"] == "13.2" and "3.15" in torch["2.15.0"]["python"]
    assert torch["2.14.1"]["default_cuda"] == "13.0"
    # Defaults corrected to PyPI's builds (read from each wheel's METADATA or bundled runtime).
    assert torch["2.0.1"]["default_cuda"] == "11.7"
    assert torch["1.11.0"]["default_cuda"] == "10.2"
    assert torch["2.11.0"]["default_cuda"] == "13.0"
    assert "3.11" in torch["1.13.1"]["python"]  # PyPI has cp311 wheels the old row lacked
    # Hand-kept facts survive; a CUDA the rows now need gets only what a rule gives.
    old_cuda = yaml.safe_load(old)["cuda"]
    for version, row in old_cuda.items():
        assert new["cuda"][version]["min_driver"] == str(row["min_driver"])
    assert new["cuda"]["13.2"]["min_driver"] is None
    assert new["cuda"]["13.2"]["family_min_driver"] == old_cuda["13.0"]["family_min_driver"]
    assert new["sources"]["pypi"] == "2026-11-26"
    assert new["sources"]["wheel_index"] == "never"
    assert any("wheel index did not answer" in p for p in result.problems)
    assert result.diff.startswith("--- a/compat.yaml")


def _hub_page(
    names: list[str], following: str | None = None, arches: dict[str, list[str]] | None = None
) -> str:
    """A tag API answer; ARCHES gives a tag's images (each result's `images`), else none."""

    def result(name: str) -> dict[str, object]:
        found = (arches or {}).get(name)
        if found is None:
            return {"name": name}
        images = [{"architecture": a, "os": "linux", "variant": None} for a in found]
        return {"name": name, "images": images}

    return json.dumps(
        {"count": len(names), "next": following, "results": [result(n) for n in names]}
    )


class SyntheticSources:
    """Answers in the published formats for the sources this machine cannot reach."""

    def __init__(
        self,
        pypi: ReplayFetcher,
        hub: dict[str, list[str]],
        index_html: str,
        arches: dict[str, list[str]] | None = None,
    ) -> None:
        self.pypi, self.hub, self.index_html, self.arches = pypi, hub, index_html, arches

    def text(self, url: str, trim: object = None) -> str:
        if url == readings.WHEEL_INDEX_URL:
            return self.index_html
        if url.startswith("https://hub.docker.com/"):
            name = url.split("name=")[1]
            tags = [t for t in self.hub.get(url.split("/")[5], []) if t.startswith(name)]
            return _hub_page(tags, arches=self.arches)
        return self.pypi.text(url)

    def wheel(self, url: str) -> dict[str, object]:
        return self.pypi.wheel(url)


def test_refresh_on_synthetic_index_and_hub_answers_drops_deleted_tags_and_confirms() -> None:
    index = (
        '<a href="/whl/cu130/torch-2.15.0%2Bcu130-cp312-cp312-manylinux_2_28_x86_64.whl">x</a>\n'
        '<a href="/whl/cu132/torch-2.15.0%2Bcu132-cp312-cp312-manylinux_2_28_x86_64.whl">x</a>\n'
        '<a href="/whl/cu126/torch-2.15.0%2Bcu126-cp312-cp312-manylinux_2_28_x86_64.whl">x</a>\n'
    )
    hub = {
        "pytorch": ["2.15.0-cuda13.2-cudnn9-runtime", "2.15.0-cuda13.0-cudnn9-devel"],
        "nvidia": ["12.4.1-cudnn-runtime-ubuntu22.04", "12.4.1-cudnn-runtime-ubuntu20.04"],
    }
    sources = SyntheticSources(ReplayFetcher(RECORDING), hub, index)
    result = refresh(sources, TABLE.read_text(), "2026-11-23")
    new = yaml.safe_load(result.text)
    row = new["torch"]["2.15.0"]
    assert row["cuda"] == ["12.6", "13.0", "13.2"] and row["confirmed"] is True
    assert row["images"] == {"13.2": 9}  # a devel-only tag is not a runtime image
    assert new["cuda"]["12.4"]["ubuntu"] == ["22.04", "20.04"]
    assert new["cuda"]["11.3"]["ubuntu"] == []  # not on the hub any more: dropped
    assert new["torch"]["2.10.0"]["images"] == {}  # its tags were not found either
    assert new["sources"] == {
        "pypi": "2026-11-23",
        "wheel_index": "2026-11-23",
        "docker_hub": "2026-11-23",
    }
    shipped = str(yaml.safe_load(TABLE.read_text())["table_version"])
    assert new["table_version"] == f"2026.11.{int(shipped.rsplit('.', 1)[1]) + 1}"


def test_refresh_reads_linux_arm64_from_the_index_pypi_and_the_hub_synthetic_answers() -> None:
    # The index's aarch64 links in their published forms (astral-sh/uv#13195 quotes the page):
    # a local version (+cu128) and, for 2.5, none (the folder names the build); a CPU wheel.
    index = (
        '<a href="/whl/cu124/torch-2.5.1-cp310-cp310-linux_aarch64.whl">torch-2.5.1-cp310-cp310'
        "-linux_aarch64.whl</a>\n"
        '<a href="/whl/cpu/torch-2.5.1-cp310-cp310-manylinux_2_17_aarch64.whl">x</a>\n'
        '<a href="/whl/cu128/torch-2.7.0%2Bcu128-cp311-cp311-manylinux_2_28_aarch64.whl" '
        'data-dist-info-metadata="sha256=00">torch-2.7.0+cu128-cp311-cp311-manylinux_2_28_aarch'
        "64.whl</a>\n"
        '<a href="/whl/cu128/torch-2.7.0%2Bcu128-cp311-cp311-manylinux_2_28_x86_64.whl">x</a>\n'
        '<a href="/whl/cu126/torch-2.7.0%2Bcu126-cp311-cp311-manylinux_2_28_x86_64.whl">x</a>\n'
    )
    hub = {
        "pytorch": ["2.7.0-cuda12.8-cudnn9-runtime"],
        "nvidia": ["12.8.1-cudnn-runtime-ubuntu24.04", "12.8.1-cudnn-runtime-ubuntu22.04"],
    }
    arches = {
        "2.7.0-cuda12.8-cudnn9-runtime": ["amd64"],
        "12.8.1-cudnn-runtime-ubuntu24.04": ["amd64", "arm64"],
        "12.8.1-cudnn-runtime-ubuntu22.04": ["amd64"],
    }
    sources = SyntheticSources(ReplayFetcher(RECORDING), hub, index, arches)
    new = yaml.safe_load(refresh(sources, TABLE.read_text(), "2026-11-27").text)
    assert new["torch"]["2.7.0"]["arm64"] == {"cuda": ["12.8"], "pypi": "cpu", "images": {}}
    assert new["torch"]["2.7.0"]["cuda"] == ["12.6", "12.8"]
    assert new["torch"]["2.5.1"]["arm64"]["cuda"] == ["12.4"]
    assert new["torch"]["2.7.0"]["images"] == {"12.8": 9}
    assert new["cuda"]["12.8"]["ubuntu"] == ["24.04", "22.04"]
    assert new["cuda"]["12.8"]["arm64_ubuntu"] == ["24.04"]


def test_pypi_aarch64_wheels_are_judged_by_their_own_markers_recorded() -> None:
    """torch 2.10's aarch64 wheel names nvidia-* for x86_64 only (a CPU build); 2.11's is
    CUDA 13.0 (read from the recorded wheels' METADATA)."""
    shipped = yaml.safe_load(TABLE.read_text())["torch"]
    assert shipped["2.10.0"]["arm64"]["pypi"] == "cpu"
    assert shipped["2.11.0"]["arm64"]["pypi"] == "13.0"
    assert shipped["2.15.0"]["arm64"]["pypi"] == "13.2"
    x86_only = 'nvidia-cuda-runtime-cu12==12.8.90; platform_machine == "x86_64"'
    assert readings.pypi_cuda({"requires_dist": [x86_only]}) == "12.8"
    assert readings.pypi_cuda({"requires_dist": [x86_only]}, "aarch64") is None


def test_readings_parse_each_published_format() -> None:
    assert cuda_of("cu102") == "10.2" and cuda_of("cu130") == "13.0"
    assert readings.pypi_cuda({"requires_dist": ["nvidia-cuda-runtime-cu11 (==11.7.99)"]}) == "11.7"
    toolkit = 'cuda-toolkit[cublas,cudart]==13.2.2; platform_system == "Linux"'
    assert readings.pypi_cuda({"requires_dist": [toolkit]}) == "13.2"
    assert (
        readings.pypi_cuda({"requires_dist": [], "bundled": ["libcudart-80664282.so.10.2"]})
        == "10.2"
    )
    assert readings.pypi_cuda({"requires_dist": [], "bundled": []}) is None
    assert readings.next_hub_page(_hub_page([], "https://hub.docker.com/v2/x?page=2")) is not None
    tags = [
        "2.5.1-cuda12.4-cudnn9-runtime",
        "2.5.1-cuda12.1-cudnn9-runtime",
        "2.5.10-cuda1.0-cudnn9-runtime",
    ]
    assert readings.pytorch_images("2.5.1", tags) == {"12.1": 9, "12.4": 9}


def test_a_recording_replays_what_was_recorded_errors_included(tmp_path: Path) -> None:
    class Inner:
        def text(self, url: str, trim: object = None) -> str:
            if "down" in url:
                raise SourceUnavailableError(f"{url}: refused")
            return f"answer of {url}"

        def wheel(self, url: str) -> dict[str, object]:
            return {"requires_dist": ["cuda-toolkit[cudart]==13.0.2"], "bundled": []}

    recorder = RecordingFetcher(Inner(), tmp_path)
    assert recorder.text("https://up.example/a") == "answer of https://up.example/a"
    assert recorder.wheel("https://up.example/w.whl")["requires_dist"]
    with contextlib.suppress(SourceUnavailableError):
        recorder.text("https://down.example/b")
    recorder.save("test")
    player = ReplayFetcher(tmp_path)
    assert player.text("https://up.example/a") == "answer of https://up.example/a"
    assert player.wheel("https://up.example/w.whl") == Inner().wheel("")
    for missing in ("https://down.example/b", "https://never.example/c"):
        try:
            player.text(missing)
        except SourceUnavailableError as exc:
            assert missing in str(exc)
        else:
            raise AssertionError(f"{missing} answered")


def test_merge_without_any_source_changes_nothing() -> None:
    previous = yaml.safe_load(TABLE.read_text())
    unchanged = merge(previous, Readings("2030-01-01", None, None, None, None))
    assert unchanged["torch"] == previous["torch"] and unchanged["cuda"] == previous["cuda"]
    assert unchanged["table_version"] == previous["table_version"]


def test_cli_refuses_bad_arguments_without_a_traceback(tmp_path: Path) -> None:
    done = envkit("compat", "refresh", "--write", "--replay", str(RECORDING))
    assert done.returncode != 0 and "--write needs --table" in done.stderr
    assert "Traceback" not in done.stderr
    done = envkit("compat", "refresh", "--replay", str(tmp_path))
    assert done.returncode != 0 and "holds no recording.json" in done.stderr
    copy = tmp_path / "compat.yaml"
    copy.write_text((DATA / "wave1-compat.yaml").read_text())
    done = envkit("compat", "refresh", "--table", str(copy), "--write", "--replay", str(RECORDING))
    assert done.returncode == 0, done.stderr
    assert '+  "2.15.0"' in done.stdout  # the diff, for review
    written, shipped = yaml.safe_load(copy.read_text()), yaml.safe_load(TABLE.read_text())
    # The same releases and PyPI builds as the shipped table (whose seed-era images were added
    # by hand from Docker Hub, which this machine cannot reach).
    pypi_facts = {v: (r["default_cuda"], r["python"]) for v, r in shipped["torch"].items()}
    assert {v: (r["default_cuda"], r["python"]) for v, r in written["torch"].items()} == pypi_facts
    answered = envkit("compat", "--torch", "2.15.0", "--json")
    assert json.loads(answered.stdout)["cuda"] == "13.2"
