"""The suite's matmul shape search beside the fixed square it replaced, per dtype, side by side
in one run (interleaved rounds, the order alternating, medians): the fixed square timed as the
suite timed it before (bench.time_batches at 8192³: one second of warm-up, ten batches of ten
products, the median batch) and the search as the suite runs it now (bench.search_matmul: its
shapes, its budget, the fastest batch of the best shape). The search's own figure at the square
is reported too, so the gain splits into what the shape brings and what best-of-batches brings.

On a GPU (the default): the suite's shapes and budget, CUDA events. With --cpu: the same code on
the CPU device, every side scaled down (--scale, 32: 8192³ becomes 256³) and timed by the wall
clock, which any machine runs; it shows the method, not what a GPU reaches.

    python benchmarks/bench_matmul_method.py [--cpu] [--rounds 3] [--budget 4] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

DTYPES = {"bf16": "bfloat16", "fp16": "float16", "tf32": "float32", "fp32": "float32"}


def _fixed(torch: Any, bench: Any, device: Any, dtype: Any, side: int) -> float:
    """TFLOP/s of the fixed square as the suite measured it before: the median batch."""
    a = torch.randn(side, side, device=device, dtype=dtype)
    b = torch.randn(side, side, device=device, dtype=dtype)
    out = torch.empty(side, side, device=device, dtype=dtype)
    cuda = device.type == "cuda"
    times = bench.time_batches(torch, lambda: torch.matmul(a, b, out=out), cuda=cuda)
    return float(2 * side**3 / statistics.median(times) / 1e12)


def _round(torch: Any, bench: Any, device: Any, dtype: Any, args: Any, first: str) -> Any:
    """One round of both methods on the same device, in the order FIRST names."""
    shapes = [tuple(side // args.scale for side in shape) for shape in bench.MATMUL_SHAPES]
    square = shapes[0][0]
    found = {}
    for method in ["fixed", "search"] if first == "fixed" else ["search", "fixed"]:
        if method == "fixed":
            found["fixed"] = _fixed(torch, bench, device, dtype, square)
        else:
            started = time.perf_counter()
            found["search"] = bench.search_matmul(torch, device, dtype, shapes, args.budget)
            found["wall"] = time.perf_counter() - started
    search = found["search"]
    return {
        "first": first,
        "fixed": found["fixed"],
        "search": search.tried[search.shape],
        "search_at_square": search.tried[shapes[0]],
        "best_shape": "x".join(map(str, search.shape)),
        "tried": {"x".join(map(str, shape)): tflops for shape, tflops in search.tried.items()},
        "seconds": search.seconds,
        "wall_seconds": found["wall"],
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cpu", action="store_true", help="the CPU device, sides scaled down")
    parser.add_argument("--scale", type=int, default=32, help="with --cpu: sides divided by it")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--budget", type=float, default=0.0, help="seconds (the suite's SEARCH_S)")
    parser.add_argument("--dtypes", default="bf16,fp16,tf32", help="with --cpu: fp32,bf16")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    try:
        import torch
    except ImportError:
        print("bench_matmul_method: needs torch (run it with that interpreter)")
        return 2
    from envkit.checks.suite import bench

    if not args.cpu and not torch.cuda.is_available():
        print("bench_matmul_method: needs a CUDA GPU, or --cpu; no figure was measured")
        return 2
    args.budget = args.budget or bench.SEARCH_S
    args.scale = args.scale if args.cpu else 1
    device = torch.device("cpu") if args.cpu else torch.device("cuda", 0)
    name = "CPU" if args.cpu else torch.cuda.get_device_name(0)
    rows = []
    for dtype_name in args.dtypes.split(","):
        if not args.cpu:
            torch.backends.cuda.matmul.allow_tf32 = dtype_name == "tf32"
        dtype = getattr(torch, DTYPES[dtype_name])
        for index in range(
            args.rounds
        ):  # alternating: neither method always gets the warmer device
            first = "fixed" if index % 2 == 0 else "search"
            rows.append({"dtype": dtype_name, **_round(torch, bench, device, dtype, args, first)})
    summary = _summary(rows, args)
    unit, factor = ("GFLOP/s", 1e3) if args.cpu else ("TFLOP/s", 1.0)
    print(f"{name}, torch {torch.__version__}, budget {args.budget:.1f} s, sides / {args.scale}")
    print(f"| dtype | fixed, median batch ({unit}) | search, best | search at the square "
          "| best shape | search / fixed | best / square | longest search (s) |")  # fmt: skip
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for row in summary:
        figures = [row[key] * factor for key in ("fixed", "search", "search_at_square")]
        print(
            f"| {row['dtype']} | "
            + " | ".join(f"{figure:.4g}" for figure in figures)
            + f" | {row['best_shapes']} | {row['ratio']:.3f} | {row['shape_ratio']:.3f} | "
            f"{row['max_seconds']:.2f} |"
        )
    if args.json:
        out = {"device": name, "torch": torch.__version__, "budget_s": args.budget,
               "scale": args.scale, "summary": summary, "rounds": rows}  # fmt: skip
        args.json.write_text(json.dumps(out, indent=2) + "\n")
    return 0


def _summary(rows: list[dict[str, Any]], args: Any) -> list[dict[str, Any]]:
    """Per dtype: medians of the rounds, the ratios of medians, every best shape seen, and the
    longest search (the budget bounds it)."""
    out = []
    for dtype_name in args.dtypes.split(","):
        mine = [row for row in rows if row["dtype"] == dtype_name]
        fixed = statistics.median(row["fixed"] for row in mine)
        search = statistics.median(row["search"] for row in mine)
        square = statistics.median(row["search_at_square"] for row in mine)
        out.append({
            "dtype": dtype_name, "fixed": fixed, "search": search, "search_at_square": square,
            "ratio": search / fixed, "shape_ratio": search / square,
            "best_shapes": ", ".join(sorted({row["best_shape"] for row in mine})),
            "max_seconds": max(row["seconds"] for row in mine),
        })  # fmt: skip
    return out


if __name__ == "__main__":
    sys.exit(main())
