"""The benches' data (issue 48): a floor for every SKU from its published figures, each row
naming its source or saying why there is none."""

from __future__ import annotations

import pytest

from envkit.checks.core.contract import DEFAULT_THRESHOLDS
from envkit.checks.suite import bench, skus


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
