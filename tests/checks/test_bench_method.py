"""The benchmarks' method for real (issue 48): the matmul shape search on the CPU path, bounded
by its budget and naming its best shape (benchmarks/bench_matmul_method.py --cpu, Debian's
torch); the all-reduce as nccl-tests reports it, timed by real gloo processes on CPU devices
and judged against the NVML stand-in's links (the slowest named); a link rate NVML cannot give
is never a pass; bench.p2p names its slowest pair."""

from __future__ import annotations

import copy
import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.checks.conftest import RunGpu
from tests.gpu_standin import links_active, on_every_gpu, on_gpu, set_field, statuses, world_of
from tests.helpers import REPO

FIGURES = re.compile(r"algbw (?P<algbw>[0-9.e+-]+) GB/s, busbw (?P<busbw>[0-9.e+-]+) GB/s")


def test_shape_search_on_the_cpu_keeps_its_budget_and_reports_its_best_shape(
    torch_python: str, tmp_path: Path
) -> None:
    out = tmp_path / "method.json"
    done = subprocess.run(
        [torch_python, "benchmarks/bench_matmul_method.py", "--cpu", "--rounds", "1",
         "--dtypes", "fp32", "--budget", "1.0", "--scale", "64", "--json", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    row = json.loads(out.read_text())["rounds"][0]
    tried: dict[str, float] = row["tried"]
    assert tried and row["best_shape"] == max(tried, key=tried.__getitem__)
    assert row["search"] == max(tried.values()) > 0
    assert "128x128x128" in tried, "the fixed square (8192³ / 64) is always tried first"
    # a batch here is ten products of at most 128³ (milliseconds): the search ends within two
    # batches of its budget, allocation included
    assert 1.0 <= row["seconds"] < 1.5 and row["wall_seconds"] < 1.5, row


def _three_gpus(world: dict[str, Any]) -> None:
    third = copy.deepcopy(world["gpus"][1])
    third.update(uuid="GPU-00000002-aaaa-bbbb-cccc-000000000002", bus_id="00000000:58:00.0")
    world["gpus"].append(third)


def test_fake_gpu_allreduce_by_real_gloo_ranks_reports_algbw_and_busbw_as_nccl_tests(
    run_gpu: RunGpu,
) -> None:
    """Three ranks, so busbw = algbw x 2(n-1)/n = 4/3 algbw; links a Gen1 x1 PCIe lane each
    (0.25 GB/s), so the CPU's gloo figure is judged and passes."""
    slow_links = [on_every_gpu(links_active(0)), on_every_gpu(set_field("pcie.max_gen", 1))]
    slow_links.append(on_every_gpu(set_field("pcie.width", 1)))
    world = world_of("h100-sxm", _three_gpus, *slow_links)
    report = run_gpu(world, ["bench.allreduce_busbw"], "fake_gpu_x3_bench", bench=True)
    status, message = statuses(report)["bench.allreduce_busbw"]
    assert status == "pass", message
    assert "gloo all-reduce of 16 MiB across 3 GPUs" in message, message
    found = FIGURES.search(message)
    assert found, message
    algbw, busbw = float(found["algbw"]), float(found["busbw"])
    assert busbw == pytest.approx(algbw * 4 / 3, rel=1e-3) and busbw > 0
    assert "of the slowest link, GPU 0's 0.25 GB/s each way" in message, message
    row = next(c for c in report["checks"] if c["id"] == "bench.allreduce_busbw")["metrics"][0]
    assert row["value"] == pytest.approx(busbw, rel=1e-3) and row["peak"] == 0.25


def test_fake_gpu_allreduce_names_the_gpu_whose_link_is_slowest(run_gpu: RunGpu) -> None:
    """GPU 1 with 9 of its 18 NVLinks (225 GB/s): a real gloo figure on CPU devices is far
    below a quarter of it, and the failure names GPU 1."""
    world = world_of("h100-sxm", on_gpu(1, links_active(9)))
    report = run_gpu(world, ["bench.allreduce_busbw"], "fake_gpu_x2_bench", bench=True)
    status, message = statuses(report)["bench.allreduce_busbw"]
    assert status == "fail", message
    assert "of the slowest link, GPU 1's 225 GB/s each way, below the floor of 25%" in message


def test_fake_gpu_allreduce_without_a_link_rate_is_reported_never_passed(
    run_gpu: RunGpu,
) -> None:
    unknown = on_gpu(1, set_field("pcie.max_gen", 0))
    world = world_of("h100-sxm", on_gpu(1, links_active(0)), unknown)
    report = run_gpu(world, ["bench.allreduce_busbw"], "busbw_fast", bench=True)
    status, message = statuses(report)["bench.allreduce_busbw"]
    assert status == "skip", message
    assert "busbw 400 GB/s" in message and "not judged: no link rate for GPU 1 (NVML)" in message


def test_fake_gpu_p2p_names_its_slowest_pair(run_gpu: RunGpu) -> None:
    """one_slow_gpu times every second copy 40 % slower: GPU 1 -> GPU 0's."""
    report = run_gpu(world_of("h100-sxm"), ["bench.p2p"], "one_slow_gpu", bench=True)
    status, message = statuses(report)["bench.p2p"]
    assert status == "pass", message
    assert "the slowest pair GPU 1 -> GPU 0 at" in message, message
