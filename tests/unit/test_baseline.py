"""The baseline and tolerance rules of envkit/history/compare.py, on synthetic runs recorded into
a real SQLite history: what counts as a regression, against what, and what never does. The
command-line path (a real verify run judged against its history) is tests/unit/test_history.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from envkit.history import compare
from envkit.history.compare import (
    MIN_RUNS,
    TOLERANCE_CAP,
    TOLERANCE_FLOOR,
    diff_runs,
    judge,
    last_pass_and_latest,
    regressions,
)
from envkit.history.store import History

CHECK = "bench.matmul_bf16"


def report(
    value: float,
    *,
    unit: str = "TFLOP/s",
    status: str = "pass",
    target: str = "docker://a",
    image: str = "sha256:aa",
    gpu: str = "NVIDIA H100 80GB HBM3",
    torch: str = "2.5.1",
    check: str = CHECK,
    name: str = "matmul_bf16",
) -> dict[str, Any]:
    failed = status != "pass"
    return {
        "started_at": "2026-11-24T00:00:00Z",
        "target": target,
        "duration_s": 1.0,
        "environment": {"torch": torch, "image_id": image, "gpus": [{"name": gpu}]},
        "summary": {"pass": 0 if failed else 1, "fail": int(failed), "skip": 0, "error": 0},
        "checks": [
            {
                "id": check,
                "status": status,
                "duration_s": 0.1,
                "message": "",
                "metrics": [{"name": name, "value": value, "unit": unit}],
            }
        ],
    }


@pytest.fixture
def history(tmp_path: Path) -> History:
    return History(tmp_path / "h.sqlite3")


def record_all(history: History, reports: list[dict[str, Any]]) -> int:
    """Records them in order; returns the last run's id."""
    last = 0
    for index, one in enumerate(reports):
        last = history.record(one, f"run-{index}")
    return last


def test_a_drop_beyond_the_floor_is_a_regression_and_one_within_it_is_not(
    history: History,
) -> None:
    steady = [report(700.0) for _ in range(5)]
    within = record_all(history, [*steady, report(700.0 * (1 - TOLERANCE_FLOOR + 0.02))])
    assert regressions(history, within) == []
    beyond = history.record(report(700.0 * (1 - TOLERANCE_FLOOR - 0.02)), "slow")
    found = regressions(history, beyond)
    assert [(r.check_id, r.name) for r in found] == [(CHECK, "matmul_bf16")]
    assert found[0].baseline == 700.0 and found[0].runs == 5
    assert "median of 5 passing runs" in found[0].describe()


def test_a_noisy_record_widens_the_tolerance_but_never_past_the_cap() -> None:
    noisy = [500.0, 700.0, 900.0, 650.0, 750.0]  # MAD 50 on a median 700: wide
    assert judge(CHECK, "m", 700 * 0.72, "TFLOP/s", noisy) is None  # -28 %: inside the spread
    assert judge(CHECK, "m", 700 * (1 - TOLERANCE_CAP - 0.01), "TFLOP/s", noisy) is not None
    wild = [100.0, 1000.0, 10.0, 700.0, 5000.0]
    assert judge(CHECK, "m", 700 * 0.5, "TFLOP/s", wild) is not None, "a 50 % fall always counts"


def test_direction_follows_the_unit() -> None:
    past = [10.0, 10.0, 10.0]
    assert judge("x.y", "t", 20.0, "s", past) is not None  # a duration that doubled
    assert judge("x.y", "t", 5.0, "s", past) is None  # faster is never a regression
    assert judge("x.y", "r", 5.0, "GB/s", past) is not None
    assert judge("x.y", "c", 0.0, "count", past) is None, "no verdict for a unit without one"


def test_host_cpu_figures_get_their_wider_floor_and_absolute_ones_are_not_judged() -> None:
    past = [3.0, 3.0, 3.0]
    assert judge("bench.cpu_matmul", "cpu_matmul_vs_python", 3.0 * 0.78, "x", past) is None
    assert judge("bench.cpu_matmul", "cpu_matmul_vs_python", 3.0 * 0.6, "x", past) is not None
    informational = judge("bench.cpu_matmul", "cpu_matmul_fp32", 1.0, "GFLOP/s", [100.0] * 3)
    assert informational is None


def test_too_few_runs_give_no_verdict(history: History) -> None:
    latest = record_all(history, [*(report(700.0) for _ in range(MIN_RUNS - 1)), report(10.0)])
    assert regressions(history, latest) == []


def test_the_baseline_is_the_same_target_image_and_gpu_and_passing_runs_only(
    history: History,
) -> None:
    others = [
        *(report(100.0, target="docker://b") for _ in range(5)),
        *(report(100.0, image="sha256:bb") for _ in range(5)),
        *(report(100.0, gpu="NVIDIA A100-SXM4-80GB") for _ in range(5)),
        *(report(100.0, status="fail") for _ in range(5)),
    ]
    latest = record_all(history, [*(report(700.0) for _ in range(3)), *others, report(650.0)])
    assert regressions(history, latest) == [], "only the three like runs at 700 count"


def test_against_one_run_or_saved_figures(history: History) -> None:
    base = history.record(report(700.0), "base")
    slow = history.record(report(400.0), "slow")
    assert [r.baseline for r in regressions(history, slow, against=base)] == [700.0]
    assert regressions(history, slow, against={(CHECK, "matmul_bf16"): 410.0}) == []
    assert regressions(history, slow, against={("other.check", "x"): 1.0}) == []


def test_diff_names_versions_flips_and_moved_figures(history: History) -> None:
    older = history.record(report(700.0, torch="2.5.1"), "a")
    newer = history.record(report(300.0, torch="2.6.0", status="fail"), "b")
    first, second = history.run(older), history.run(newer)
    assert first is not None and second is not None
    found = diff_runs(history, first, second)
    assert ("torch", "2.5.1", "2.6.0") in found.changed
    assert (CHECK, "pass", "fail") in found.flipped
    assert [m[0] for m in found.moved] == [f"{CHECK} matmul_bf16"]


def test_the_default_pair_is_the_last_pass_before_the_latest(history: History) -> None:
    record_all(history, [report(700.0), report(700.0, status="fail"), report(1.0, status="fail")])
    pair = last_pass_and_latest(history, None)
    assert pair is not None and (pair[0].id, pair[1].id) == (1, 3)
    assert last_pass_and_latest(history, "docker://nobody") is None


def test_the_floors_table_and_the_informational_set_name_real_checks() -> None:
    """The prefixes and ids the rules name exist in the suite, so a rename cannot silently
    disable a rule."""
    from envkit.checks.core.registry import CHECKS
    from envkit.checks.suite import load

    load()
    assert all(any(i.startswith(p) for i in CHECKS) for p in compare.FLOORS)
    assert all(check in CHECKS for check, _ in compare.INFORMATIONAL)


def test_diff_reports_a_new_xid_and_rising_correctable_ecc(history: History) -> None:
    def hardware(xid: int | None, corrected: float) -> dict[str, Any]:
        run = report(700.0)
        metrics = [{"name": "ecc_aggregate_corrected.gpu0", "value": corrected, "unit": "count"}]
        run["checks"].append({"id": "gpu.ecc", "status": "pass", "duration_s": 0.1,
                              "message": "", "metrics": metrics})  # fmt: skip
        if xid is not None:
            seen = [{"name": f"xid_{xid}", "value": 1.0, "unit": "count"}]
            run["checks"].append({"id": "gpu.xid", "status": "pass", "duration_s": 0.1,
                                  "message": "", "metrics": seen})  # fmt: skip
        return run

    older = history.record(hardware(None, 2.0), "a")
    newer = history.record(hardware(13, 5.0), "b")
    first, second = history.run(older), history.run(newer)
    assert first is not None and second is not None
    found = diff_runs(history, first, second)
    assert ("gpu.xid xid_13", 0.0, 1.0) in found.rose
    assert ("gpu.ecc ecc_aggregate_corrected.gpu0", 2.0, 5.0) in found.rose
    same = diff_runs(history, second, second)
    assert same.rose == [], "a counter that did not move is not news"
