"""Both builders' output becomes the same events. The lines below are BuildKit's plain progress
and the classic builder's stream as this machine's engine printed them (buildx 0.13.1, Docker
20.10): BuildKit resolves its cache for several steps at once and prints their headers out of
order; the events must still come in step order, each "(cached)" under its own step."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from envkit.engine.build import BuildProgress
from envkit.engine.buildkit import PlainOutput, buildx_command, shown
from envkit.engine.classic import follow
from envkit.errors import BuildFailedError

CACHED_OUT_OF_ORDER = """\
#0 building with "default" instance using docker driver

#1 [internal] load build definition from Dockerfile
#1 transferring dockerfile: 5.20kB done
#1 DONE 0.0s

#4 [stage-0 1/4] FROM docker.io/envkit-test/debian:bookworm
#4 DONE 0.0s

#7 [stage-0 3/4] RUN --mount=type=cache,id=envkit-pip,target=/root/.cache/pip,sharing=locked     python3 -m venv /opt/venv
#7 CACHED

#6 [stage-0 2/4] COPY envkit/apt/ /opt/envkit/apt/
#6 CACHED

#8 [stage-0 4/4] RUN --mount=type=cache,id=envkit-uv,target=/root/.cache/uv,sharing=locked     /opt/envkit/uv/bin/uv pip install --       tqdm       six
#8 0.260 Using Python 3.11.2 environment at: /opt/venv
#8 0.450  + six==1.16.0
#8 DONE 0.5s

#9 exporting to image
#9 exporting layers 2.1s done
#9 DONE 2.2s
"""

FAILED_STEP = """\
#4 [stage-0 1/2] FROM docker.io/envkit-test/debian:bookworm
#4 DONE 0.0s

#5 [stage-0 2/2] RUN /opt/envkit/uv/bin/uv pip install -- no-such-pkg-xyz
#5 0.260 Using Python 3.11.2 environment at: /opt/venv
#5 0.371 error: No solution found when resolving dependencies
#5 0.371   cause: Because no-such-pkg-xyz was not found in the package registry and you require no-such-pkg-xyz, we can conclude that your requirements are unsatisfiable.
#5 ERROR: process "/bin/bash -o pipefail -c /opt/envkit/uv/bin/uv pip install -- no-such-pkg-xyz" did not complete successfully: exit code: 1
------
 > [stage-0 2/2] RUN /opt/envkit/uv/bin/uv pip install -- no-such-pkg-xyz:
------
ERROR: failed to solve: process "/bin/bash -o pipefail -c /opt/envkit/uv/bin/uv pip install -- no-such-pkg-xyz" did not complete successfully: exit code: 1
"""


def _events(text: str) -> tuple[list[tuple[str, int, str]], PlainOutput]:
    seen: list[tuple[str, int, str]] = []

    def report(event: str, progress: BuildProgress, line: str) -> None:
        seen.append((event, progress.step, line if event != "step" else progress.instruction))

    parsed = PlainOutput()
    for line in text.splitlines():
        parsed.line(line, report)
    return seen, parsed


def test_buildkit_steps_come_in_order_each_cached_under_its_own() -> None:
    events, parsed = _events(CACHED_OUT_OF_ORDER)
    steps = [(step, text) for event, step, text in events if event == "step"]
    assert [step for step, _ in steps] == [1, 2, 3, 4]
    assert steps[2][1] == "RUN python3 -m venv /opt/venv", "mount flags and blank runs dropped"
    cached = [step for event, step, _ in events if event == "cached"]
    assert cached == [2, 3]
    order = [(event, step) for event, step, _ in events if event in ("step", "cached")]
    assert order.index(("cached", 2)) == order.index(("step", 2)) + 1
    assert order.index(("cached", 3)) == order.index(("step", 3)) + 1
    output = [text for event, step, text in events if event == "output" and step == 4]
    assert output == ["Using Python 3.11.2 environment at: /opt/venv", " + six==1.16.0"]
    assert parsed.progress.total == 4 and parsed.error is None
    assert parsed.progress.export_s == 2.1


def test_a_failed_buildkit_step_is_named_with_its_log_and_hint() -> None:
    from envkit.engine.buildkit import _failed

    _, parsed = _events(FAILED_STEP)
    assert parsed.error is not None and "exit code: 1" in parsed.error
    with pytest.raises(BuildFailedError) as failed:
        _failed(parsed)
    message = str(failed.value.args[0])
    assert "at step 2/2: RUN /opt/envkit/uv/bin/uv pip install -- no-such-pkg-xyz" in message
    assert "| error: No solution found when resolving dependencies" in message
    assert failed.value.fix is not None and "the index has no no-such-pkg-xyz" in failed.value.fix


def test_shown_drops_only_mount_flags() -> None:
    text = "RUN --mount=type=cache,id=a,target=/b,sharing=locked \\\n    apt-get --mount=x install"
    assert shown(text) == "RUN apt-get --mount=x install"


def test_buildx_command_passes_every_option_as_its_own_word(tmp_path: Any) -> None:
    from envkit.engine.build import BuildOptions

    options = BuildOptions(
        tag="envkit/x:latest",
        no_cache=True,
        build_args={"A": "b c"},
        network="host",
        labels={"io.envkit.inputs": "d"},
    )
    argv = buildx_command(tmp_path, "Dockerfile", options, tmp_path / "iid")
    assert argv[:5] == ["docker", "buildx", "build", "--load", "--progress=plain"]
    assert argv[argv.index("--build-arg") : argv.index("--build-arg") + 2] == [
        "--build-arg",
        "A=b c",
    ]
    assert argv[-2:] == ["--", str(tmp_path)] and "--no-cache" in argv
    assert argv[argv.index("--network") + 1] == "host"


def test_classic_stream_strips_colour_and_collapses_continuations() -> None:
    seen: list[tuple[str, str]] = []

    def report(event: str, progress: BuildProgress, text: str) -> None:
        seen.append((event, text))

    stream = [
        {"stream": "Step 1/2 : FROM base\n"},
        {"stream": "Step 2/2 : RUN a  &&       b\n"},
        {"stream": "\x1b[91merror: it broke\n\x1b[0m"},
        {"error": "The command returned a non-zero code: 1"},
    ]
    with pytest.raises(BuildFailedError) as failed:
        follow(iter(stream), report)
    assert ("step", "RUN a && b") in seen
    assert ("output", "error: it broke") in seen
    assert "\x1b" not in str(failed.value.args[0])


def _shown(feed: Any, tty: bool) -> str:
    import io

    from envkit.engine.progress import console_reporter

    out = io.StringIO()
    feed(console_reporter(out, tty=tty))
    return out.getvalue()


def _buildkit(text: str) -> Any:
    from envkit.engine.build import finish

    def feed(report: Any) -> None:
        parsed = PlainOutput()
        for line in text.splitlines():
            parsed.line(line, report)
        finish(parsed.progress, report)

    return feed


def test_each_step_shows_its_duration_when_it_ends_and_the_build_a_summary() -> None:
    """tty: a step's line gets its duration (BuildKit's own DONE figure) or "cached" as it
    ends; the summary names the total, what was cached and the slowest steps."""
    text = _shown(_buildkit(CACHED_OUT_OF_ORDER), tty=True)
    lines = text.splitlines()
    assert lines[1] == "[2/4] COPY envkit/apt/ /opt/envkit/apt/  cached"
    assert lines[2] == "[3/4] RUN python3 -m venv /opt/venv  cached"
    assert lines[3].startswith("[4/4] RUN /opt/envkit/uv/bin/uv pip install") and lines[3].endswith(
        "  0.5s"
    )
    summary = text.split("built in ", 1)[1]
    assert "4 steps, 2 run, 2 from cache, writing the layers 2.1s" in summary
    assert "slowest: [4/4] 0.5s RUN /opt/envkit/uv/bin/uv" in summary


def test_plain_progress_writes_a_line_when_a_step_begins_and_one_when_it_ends() -> None:
    text = _shown(_buildkit(CACHED_OUT_OF_ORDER), tty=False)
    lines = text.splitlines()
    assert lines[:2] == ["[1/4] FROM docker.io/envkit-test/debian:bookworm", "[1/4] 0.0s"]
    assert "[2/4] cached" in lines and "[4/4] 0.5s" in lines


class _Clock:
    """time.monotonic under the test's control."""

    def __init__(self, now: list[float]) -> None:
        self.now = now

    def monotonic(self) -> float:
        return self.now[0]


def test_classic_steps_are_timed_between_their_starts_and_shown_the_same_way(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import envkit.engine.build as build
    import envkit.engine.progress as shown

    now = [0.0]
    monkeypatch.setattr(build, "time", _Clock(now))
    monkeypatch.setattr(shown, "time", _Clock(now))
    timed = [  # (the clock when the engine sent it, the chunk)
        (0.0, {"stream": "Step 1/3 : FROM base\n"}),
        (10.0, {"stream": "Step 2/3 : RUN apt-get install x\n"}),
        (10.5, {"stream": " ---> Using cache\n"}),
        (12.5, {"stream": "Step 3/3 : RUN pip install y\n"}),
        (40.0, {"stream": "Successfully built abc\n"}),
    ]

    def stream() -> Any:
        for when, chunk in timed:
            now[0] = when
            yield chunk

    text = _shown(lambda report: follow(stream(), report), tty=True)
    assert "[2/3] RUN apt-get install x  cached" in text
    assert "[3/3] RUN pip install y  27.5s" in text, text
    assert "[1/3] FROM base  10.0s" in text
    assert "built in 40.0s: 3 steps, 2 run, 1 from cache" in text


def test_json_progress_has_each_steps_duration_and_the_whole_list_at_the_end() -> None:
    import io
    import json

    from envkit.engine.progress import json_reporter

    out = io.StringIO()
    _buildkit(CACHED_OUT_OF_ORDER)(json_reporter(out))
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    done = [r for r in rows if r["event"] == "step_done"]
    assert [(r["step"], r["cached"]) for r in done] == [
        (1, False),
        (2, True),
        (3, True),
        (4, False),
    ]
    assert done[-1]["duration_s"] == 0.5
    final = rows[-1]
    assert final["event"] == "done" and [s["step"] for s in final["steps"]] == [1, 2, 3, 4]


def test_dry_run_steps_are_keyed_by_their_text_and_copied_files_and_chained() -> None:
    from envkit.render.steps import label, reused, steps

    dockerfile = (
        "# comment\nFROM base\nCOPY envkit/apt/ /opt/apt/\nRUN a \\\n    && b\n"
        'COPY ["envkit/project/req.txt", "/opt/req.txt"]\nRUN pip install -r /opt/req.txt\n'
    )
    files = {"envkit/apt/x.sh": "1", "envkit/project/req.txt": "six\n"}
    before = steps(dockerfile, files)
    assert [s.instruction for s in before][2] == "RUN a && b"
    edited = steps(dockerfile, {**files, "envkit/project/req.txt": "six\ntqdm\n"})
    assert reused(edited, label(before)) == 3, "the edited file's COPY and all after it run"
    assert reused(steps(dockerfile, files), label(before)) == 5
    apt = steps(dockerfile, {**files, "envkit/apt/x.sh": "2"})
    assert reused(apt, label(before)) == 1
    assert reused(before, None) == 0


@pytest.mark.parametrize("dockerfile", ["Dockerfile", "Dockerfile.classic"])
def test_a_key_change_rebuilds_no_step_and_a_pip_change_only_from_the_pip_step(
    dockerfile: str, tmp_path: Path
) -> None:
    """Both Dockerfiles, through the cache model of `build --dry-run` (an instruction's text and
    the bytes a COPY copies, chained, as both builders key their cache): the e2e test runs it
    for real on BuildKit (tests/e2e/test_build.py)."""
    from envkit.render.files import render_files
    from envkit.render.steps import label, reused, steps
    from tests.helpers import plan_text

    key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMYZoO4AcJo32+7D8n7/JRWOMEU0KB/J8w4HuJ01GVSD a@b"
    other = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIC7DCI7dF0oKzaNKmAZUcryr0YO3pA8ZO+y+PH2pK/md c@d"
    config = (
        "name: e2e\nbase: {flavor: custom, image: 'debian:bookworm'}\n"
        "packages:\n  apt: [python3-torch, git]\n  pip: [tqdm]\n"
        "mirrors: {preset: official}\nssh:\n  authorized_keys: ['%s']\n"
    )

    def built(text: str) -> list[Any]:
        files = render_files(plan_text(text, tmp_path))
        return steps(files[dockerfile], files)

    first = built(config % key)
    keyed = built(config % f"{key}', '{other}")
    assert reused(keyed, label(first)) == len(first), "a key is in no layer"
    changed = built((config % key).replace("pip: [tqdm]", "pip: [tqdm, six]"))
    kept = reused(changed, label(first))
    assert kept < len(changed)
    rebuilt = changed[kept].instruction
    assert "pip install" in rebuilt and "six" in rebuilt, rebuilt
    assert any("apt-get install" in s.instruction for s in changed[:kept]), "apt before pip"
