"""The runner isolates checks: a hang or a crash is an `error` for that check, and the suite goes
on in a fresh worker. Real runner, real torch, breakages planted through tests/plants."""

from __future__ import annotations

from pathlib import Path

from tests.checks.conftest import RunChecks
from tests.helpers import status_of


def test_a_collective_that_never_returns_becomes_an_error_with_a_hint(
    run_checks: RunChecks,
) -> None:
    # ddp's timeout is 180 s; scaled by 0.05 it is 9 s, so the test stays short. system.shm runs
    # after multigpu in contract order, so it shows the suite goes on after the hang.
    report = run_checks(["multigpu.ddp", "system.shm"], "allreduce_hangs", timeout_scale=0.05)
    status, message = status_of(report, "multigpu.ddp")
    assert status == "error"
    assert "timed out after 9 s" in message and "P2P" in message
    assert status_of(report, "system.shm")[0] == "pass", "the suite went on after the hang"
    assert [c["id"] for c in report["checks"]] == ["multigpu.ddp", "system.shm"]


def test_ranks_that_die_without_answering_fail_ddp_at_once_instead_of_hanging(
    run_checks: RunChecks,
) -> None:
    # Each rank SIGKILLs itself in its first all-reduce (as a segfault would end it): nothing
    # reaches the queue from it (the other may first see its peer gone and say so). The check
    # says so when the ranks are gone, long before its timeout (scaled to 9 s here: an error
    # "timed out" would mean the parent waited for them).
    report = run_checks(["multigpu.ddp"], "ranks_killed", timeout_scale=0.05)
    status, message = status_of(report, "multigpu.ddp")
    assert status == "fail", (status, message)
    assert "rank(s) ended before they answered" in message and "code -9" in message, message


def test_a_crash_becomes_an_error_and_the_suite_goes_on(run_checks: RunChecks) -> None:
    report = run_checks(["tensor.creation", "tensor.attributes"], "segfault_in_eye")
    status, message = status_of(report, "tensor.creation")
    assert status == "error" and "SIGSEGV" in message
    assert status_of(report, "tensor.attributes")[0] == "pass"


def test_no_torch_is_one_clear_error_per_check(torch_python: str, tmp_path: Path) -> None:
    import json
    import os
    import subprocess

    from tests.helpers import REPO

    # A torch that cannot be imported, ahead of the real one: the same on every machine.
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text("raise ImportError('planted: no torch')\n")
    done = subprocess.run(
        [
            torch_python,
            "-m",
            "envkit.checks",
            "run",
            "--config",
            json.dumps({"only": ["tensor"]}),
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=dict(os.environ, PYTHONPATH=f"{tmp_path}{os.pathsep}{REPO}"),
        check=False,
    )
    report = json.loads(done.stdout)
    assert done.returncode == 1
    assert {c["status"] for c in report["checks"]} == {"error"}
    assert all("torch cannot be imported" in c["message"] for c in report["checks"])


def test_report_follows_the_contract(run_checks: RunChecks) -> None:
    report = run_checks(["tensor.creation", "system.shm", "cuda.available"])
    assert report["schema_version"] == 1
    env = report["environment"]
    for key in ("python", "torch", "cuda_runtime", "driver", "cudnn", "nccl", "gpus", "hostname"):
        assert key in env
    for check in report["checks"]:
        assert set(check) >= {"id", "group", "status", "duration_s", "message", "metrics"}
        assert check["status"] in ("pass", "fail", "skip", "error")
    shm = next(c for c in report["checks"] if c["id"] == "system.shm")
    metric = shm["metrics"][0]
    assert set(metric) == {
        "name", "value", "unit", "peak", "fraction_of_peak", "threshold", "minimum", "maximum",
    }  # fmt: skip
    assert metric["minimum"] == 1 << 30, "verify.min_shm's default, the bound it is judged by"
    assert metric["value"] > 0 and metric["unit"] == "bytes"
    assert [c["id"] for c in report["checks"]] == [
        "cuda.available",
        "tensor.creation",
        "system.shm",
    ]


def test_skips_carry_their_reason(run_checks: RunChecks) -> None:
    report = run_checks(["cuda", "bench.matmul_bf16"], "cpu_only_torch")
    for check in report["checks"]:
        assert check["status"] == "skip" and check["message"], check


def test_bench_checks_run_only_when_asked() -> None:
    from envkit.checks.suite import chosen

    default = {s.id for s in chosen([], [], bench=False)}
    assert not any(i.startswith("bench.") for i in default)
    assert any(i.startswith("bench.") for i in {s.id for s in chosen([], [], bench=True)})
    assert {s.id for s in chosen(["bench.matmul_bf16"], [], bench=False)} == {"bench.matmul_bf16"}
    assert not any(
        i.startswith("tensor") for i in {s.id for s in chosen([], ["tensor"], bench=False)}
    )


def test_under_emulation_the_benchmarks_skip_saying_why_and_the_other_checks_run(
    run_checks: RunChecks,
) -> None:
    # What verify sets for an image of another platform run by QEMU (targets/image.py): a
    # figure there times the emulator, so the CPU benchmarks skip; correctness is still judged.
    # DDP's ranks are spawned there, not forked (a forked rank hung under QEMU): still exact.
    only = ["bench.cpu_matmul", "bench.cpu_memcpy", "tensor.creation", "multigpu.ddp"]
    report = run_checks(only, bench=True, emulated=True)
    for check_id in ("bench.cpu_matmul", "bench.cpu_memcpy"):
        status, message = status_of(report, check_id)
        assert status == "skip" and "runs under emulation (QEMU)" in message, (status, message)
        assert not next(c for c in report["checks"] if c["id"] == check_id)["metrics"]
    assert status_of(report, "tensor.creation")[0] == "pass"
    assert status_of(report, "multigpu.ddp")[0] == "pass", status_of(report, "multigpu.ddp")
    native = run_checks(["bench.cpu_memcpy"], bench=True)
    assert status_of(native, "bench.cpu_memcpy")[0] == "pass", "natively it measures"


def test_user_checks_join_the_report(run_checks: RunChecks, tmp_path: Path) -> None:
    (tmp_path / "test_mine.py").write_text(
        "import torch, pytest\n"
        "def test_ok():\n    assert torch.ones(2).sum().item() == 2\n"
        "def test_broken():\n    assert torch.zeros(1).item() == 1, 'planted'\n"
        "@pytest.mark.skip(reason='not today')\ndef test_later():\n    pass\n"
    )
    report = run_checks(["tensor.creation"], user_checks_dir=str(tmp_path))
    users = {c["id"]: c["status"] for c in report["checks"] if c["group"] == "user"}
    assert users == {
        "user.test_mine.test_ok": "pass",
        "user.test_mine.test_broken": "fail",
        "user.test_mine.test_later": "skip",
    }


def test_user_check_output_with_escape_sequences_costs_no_other_result(
    run_checks: RunChecks, tmp_path: Path
) -> None:
    """pytest writes what tests say into its JUnit file; some versions put ANSI colour there raw,
    which XML 1.0 cannot carry. The parser reads it anyway, and the other checks' results stay."""
    (tmp_path / "test_colour.py").write_text(
        "import pytest\n"
        "def test_coloured_skip():\n    pytest.skip('\\x1b[31mred\\x1b[0m reason')\n"
        "def test_fine():\n    assert True\n"
    )
    report = run_checks(["tensor.creation"], user_checks_dir=str(tmp_path))
    got = {c["id"]: c["status"] for c in report["checks"]}
    assert got["tensor.creation"] == "pass", got
    assert got["user.test_colour.test_coloured_skip"] == "skip", got
    assert got["user.test_colour.test_fine"] == "pass", got


def test_the_junit_reader_survives_what_xml_forbids(tmp_path: Path) -> None:
    from envkit.checks.programs.userchecks import _parse

    junit = tmp_path / "junit.xml"
    junit.write_bytes(
        b'<?xml version="1.0"?><testsuites><testsuite>'
        b'<testcase classname="t" name="a" time="0.1"><skipped message="\x1b[31mred &#27;[0m"/>'
        b"</testcase>"
        b'<testcase classname="t" name="b" time="oops"><failure message="\x00boom">x</failure>'
        b"</testcase></testsuite></testsuites>"
    )
    rows = {r["id"]: (r["status"], r["message"]) for r in _parse(junit)}
    assert rows["user.t.a"] == ("skip", "\\x1b[31mred \\x1b[0m")
    assert rows["user.t.b"] == ("fail", "\\x00boom")
    junit.write_bytes(b"<not xml")
    assert _parse(junit)[0]["status"] == "error", "one error result, not a crash"
