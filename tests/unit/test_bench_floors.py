"""The benches' arithmetic and data (issue 48): the matmul shape search bounded by its budget and
naming its best shape (on a stand-in for torch whose products take known times, so the best is
known), bus bandwidth as nccl-tests defines it, and a floor for every SKU from its published
figures, each row naming its source or saying why there is none."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from envkit.checks.core.contract import DEFAULT_THRESHOLDS
from envkit.checks.suite import bench, distributed, skus

Shape = tuple[int, int, int]


class TimedTorch:
    """The part of torch the search uses, on the CPU: a product of SHAPE takes CALL_S[shape] on
    the search's clock, a virtual one (`clock` below), so its TFLOP/s is known before it is
    measured and no load on the machine can stretch it."""

    def __init__(self, call_s: dict[Shape, float]) -> None:
        self.call_s = call_s
        self.products = 0
        self.now = 0.0

    def manual_seed(self, seed: int) -> None:
        pass

    def randn(self, *size: int, device: object, dtype: object) -> tuple[int, ...]:
        return size

    def empty(self, *size: int, device: object, dtype: object) -> tuple[int, ...]:
        return size

    def matmul(self, a: tuple[int, int], b: tuple[int, int], out: object) -> None:
        self.products += 1
        self.now += self.call_s[(a[0], b[1], a[1])]


def clocked(monkeypatch: pytest.MonkeyPatch, call_s: dict[Shape, float]) -> TimedTorch:
    """A TimedTorch whose clock is the one the bench reads."""
    fake = TimedTorch(call_s)
    monkeypatch.setattr(bench, "time", SimpleNamespace(perf_counter=lambda: fake.now))
    return fake


CPU = SimpleNamespace(type="cpu")


def tflops(shape: Shape, seconds: float) -> float:
    m, n, k = shape
    return 2 * m * n * k / seconds / 1e12


def test_the_search_reports_the_fastest_shape_it_tried_with_its_figure(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = {(64, 64, 64): 0.002, (32, 128, 64): 0.001, (128, 32, 32): 0.001}
    fake = clocked(monkeypatch, calls)
    found = bench.search_matmul(fake, CPU, "float32", list(calls), budget_s=0.6)
    assert list(found.tried) == list(calls), "every shape tried, in order"
    assert found.shape == (32, 128, 64), "twice the work of 128x32x32 in the same time"
    for shape, figure in found.tried.items():
        assert figure == pytest.approx(tflops(shape, calls[shape])), shape


@pytest.mark.parametrize("budget", [0.3, 0.8])
def test_the_search_keeps_its_time_budget(monkeypatch: pytest.MonkeyPatch, budget: float) -> None:
    """Six shapes at 2-4 ms a product (a batch of ten: 20-40 ms): the search ends within two
    batches of its budget, whatever the budget, and spends most of it."""
    calls = {(16 * i, 16, 16): 0.002 * (1 + i % 2) for i in range(1, 7)}
    fake = clocked(monkeypatch, calls)
    found = bench.search_matmul(fake, CPU, "float32", list(calls), budget_s=budget)
    assert budget * 0.9 < fake.now < budget + 2 * 10 * 0.004, (fake.now, budget)
    assert found.seconds == fake.now


def test_a_budget_too_short_for_every_shape_leaves_the_last_untried_and_says_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = {(64, 64, 64): 0.02, (32, 32, 32): 0.02, (16, 16, 16): 0.02}  # a batch: 0.2 s
    found = bench.search_matmul(clocked(monkeypatch, calls), CPU, "float32", list(calls), 0.3)
    assert list(found.tried) == [(64, 64, 64)], found.tried
    assert found.shape == (64, 64, 64)


@pytest.mark.parametrize(("world", "factor"), [(2, 1.0), (3, 4 / 3), (4, 1.5), (8, 1.75)])
def test_busbw_is_nccl_tests_all_reduce_formula(world: int, factor: float) -> None:
    """nccl-tests doc/PERFORMANCE.md: algbw = S/t, all-reduce busbw = algbw * 2(n-1)/n."""
    size, seconds = 8 << 30, 0.05
    algbw = size / seconds / 1e9
    assert distributed.busbw_gbs(size, seconds, world) == pytest.approx(algbw * factor)


def _unpublished(sku: skus.Sku) -> set[str]:
    """The figures a row's `unpublished` names: "names: why; names: why", "all" for every one."""
    named = set()
    for clause in filter(None, sku.unpublished.split("; ")):
        names, _, why = clause.partition(": ")
        assert why.strip(), f"{sku.name}: {clause!r} names figures but not why"
        for name in names.split(", "):
            named |= set(skus.FIGURES) if name == "all" else {name}
    return named


@pytest.mark.parametrize("sku", skus.SKUS, ids=lambda sku: sku.name)
def test_every_sku_has_its_published_figures_and_their_source_or_says_why(sku: skus.Sku) -> None:
    missing = {name for name in skus.FIGURES if not getattr(sku, name)}
    assert missing == _unpublished(sku), (
        f"{sku.name}: a figure is neither published here nor explained, or explained but given"
    )
    for name in set(skus.FIGURES) - missing:
        assert float(getattr(sku, name)) > 0, (sku.name, name)
    if missing != set(skus.FIGURES):
        assert sku.source and "http" in sku.source, f"{sku.name}: figures need their document"
    else:
        assert sku.source is None and sku.unpublished.startswith("all: "), sku.name


def test_floors_are_fractions_of_the_published_figures_not_another_tools() -> None:
    """The H200's memory floor is 0.65 of its published 4,800 GB/s; DCGM 4.6 writes 2333 (MB/s
    read as GB/s, a thousand times too low) and no row carries a DCGM figure any more."""
    h200 = skus.sku_for(0x2335)
    assert h200 is not None and h200.memory_gbs == 4800 and h200.bf16 == 989.5
    assert DEFAULT_THRESHOLDS["bench.memory_bandwidth"] * h200.memory_gbs == 3120
    assert not any(name.startswith("dcgm") for name in vars(h200))
    fractions = [DEFAULT_THRESHOLDS[f"bench.matmul_{dtype}"] for dtype in bench.DTYPES]
    assert all(0 < fraction < 0.8 for fraction in fractions), "floors, not targets"
