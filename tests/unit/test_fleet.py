"""Many targets at once: the pool's bound, order, isolation of a failing target, and the targets
file's errors (named by file and line, before anything runs)."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from envkit.errors import EnvkitError
from envkit.targets import read_targets_file
from envkit.verify.fleet import verify_many


def test_at_most_parallel_targets_run_at_once_and_order_is_kept() -> None:
    running, peak, lock = 0, 0, threading.Lock()

    def run_one(url: str) -> dict[str, Any]:
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
        time.sleep(0.05)
        with lock:
            running -= 1
        return {"target": url}

    urls = [f"docker://c{i}" for i in range(9)]
    outcomes = verify_many(urls, run_one, parallel=3)
    assert [o.target for o in outcomes] == urls
    assert peak == 3, "the bound is reached and never exceeded"


def test_no_targets_and_one_target_need_no_pool() -> None:
    assert verify_many([], lambda url: {"target": url}, parallel=4) == []
    (only,) = verify_many(["docker://a", "docker://a"], lambda url: {"target": url}, parallel=4)
    assert only.report == {"target": "docker://a"}


def test_a_failing_target_is_reported_and_the_others_still_run() -> None:
    def run_one(url: str) -> dict[str, Any]:
        if url.endswith("down"):
            raise EnvkitError("container down is exited", "start it")
        if url.endswith("broken"):
            raise ConnectionResetError("peer went away")
        return {"target": url}

    outcomes = verify_many(
        ["docker://a", "docker://down", "ssh://x@broken", "docker://b"], run_one, 2
    )
    assert [o.report is not None for o in outcomes] == [True, False, False, True]
    assert outcomes[1].problem is not None and "is exited" in outcomes[1].problem
    assert outcomes[2].problem == "ConnectionResetError: peer went away"


def test_a_hung_target_is_abandoned_at_its_deadline_and_the_others_finish() -> None:
    """The client-side deadline: a target that never returns (a paused container, a peer that
    stopped answering) must not hold the run, nor the pool's slot."""
    release = threading.Event()

    def run_one(url: str) -> dict[str, Any]:
        if url.endswith("hung"):
            release.wait(60)  # never released during the test
        else:
            time.sleep(0.2)
        return {"target": url}

    started = time.monotonic()
    urls = ["docker://hung", "docker://a", "docker://b", "docker://c"]
    outcomes = verify_many(urls, run_one, parallel=1, deadline=1.0)
    took = time.monotonic() - started
    release.set()
    assert [o.report is not None for o in outcomes] == [False, True, True, True]
    assert outcomes[0].problem is not None and "gave no result within 1s" in outcomes[0].problem
    # 1 s for the hung one, then the three others one after another on a fresh worker
    assert took < 5, f"the run waited for the hung target ({took:.1f}s)"


def test_targets_file_comments_blank_lines_and_bad_lines(tmp_path: Path) -> None:
    listing = tmp_path / "targets.txt"
    listing.write_text("# fleet\n\ndocker://a  # first\nssh://dev@gpu-1:2222\n")
    urls = read_targets_file(listing)
    assert [(u.url, u.scheme, u.rest) for u in urls] == [
        ("docker://a", "docker", "a"),
        ("ssh://dev@gpu-1:2222", "ssh", "dev@gpu-1:2222"),
    ]
    listing.write_text("docker://a\n\nftp://nope\n")
    with pytest.raises(EnvkitError, match=r"targets.txt:3: 'ftp://nope' is not a target"):
        read_targets_file(listing)
    listing.write_text("# nothing\n")
    with pytest.raises(EnvkitError, match="no targets"):
        read_targets_file(listing)


def test_cli_bad_targets_file_exits_2_without_a_traceback(tmp_path: Path) -> None:
    listing = tmp_path / "targets.txt"
    listing.write_text("docker://a\ndocker://\n")
    done = subprocess.run(
        [sys.executable, "-m", "envkit", "verify", "--targets", str(listing)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert f"{listing}:2" in done.stderr and "Traceback" not in done.stderr
    missing = subprocess.run(
        [sys.executable, "-m", "envkit", "verify", "--targets", str(tmp_path / "none.txt")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    assert missing.returncode == 2 and "cannot read targets file" in missing.stderr


HARNESS = """
import signal, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler)  # a background parent may ignore it
import envkit.commands.verify as command
from envkit.cli import main

def hang(url, *rest):
    sys.stdout.write(f"started {url.url}\\n")
    sys.stdout.flush()
    time.sleep(120)  # a target whose suite never answers

command._one = hang
sys.argv = ["envkit", "verify", "--target", "docker://a", "--target", "docker://b"]
main()
"""


def test_ctrl_c_during_a_fleet_run_exits_130_at_once(tmp_path: Path) -> None:
    import signal

    proc = subprocess.Popen(
        [sys.executable, "-c", HARNESS],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    try:
        # Both targets under way. Two threads print at once, so their lines may interleave.
        seen = ""
        while seen.count("started docker://") < 2:
            line = proc.stdout.readline()
            assert line, f"the harness ended early: {proc.communicate()[1][-2000:]}"
            seen += line
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
        proc.communicate()
    assert proc.returncode == 130 and "interrupted" in err and "Traceback" not in err
    assert time.monotonic() - sent < 10, "it waited for the hung targets"
