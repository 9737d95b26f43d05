"""The suite's matmul measurement beside a plain tuned loop, per dtype, in one run on one GPU:
whether envkit's figure reads what the GPU can do (issue 24: within 5 % of the tuned loop, and
at least 80 % of the dense peak on an H100 for bf16 and fp16). Needs a CUDA GPU; on a machine
without one it says so and exits 2 without a figure.

    python benchmarks/bench_matmul_method.py [--size 8192] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def tuned_loop(torch: object, a: object, b: object, iters: int = 200) -> float:
    """TFLOP/s of back-to-back products after a long warm-up: the reference method."""
    import torch as t

    for _ in range(iters):
        t.matmul(a, b)
    t.cuda.synchronize()
    start, end = t.cuda.Event(enable_timing=True), t.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        t.matmul(a, b)
    end.record()
    end.synchronize()
    size = a.shape[0]  # type: ignore[attr-defined]
    return 2 * size**3 * iters / (start.elapsed_time(end) / 1000) / 1e12


def _one(torch: object, bench: object, size: int, dtype: object, order: str) -> tuple[float, float]:
    """(the suite's TFLOP/s, the tuned loop's), measured in `order` on the same matrices."""
    import torch as t

    a = t.randn(size, size, device="cuda", dtype=dtype)
    b = t.randn(size, size, device="cuda", dtype=dtype)
    out = t.empty_like(a)
    loop = tuned_loop(torch, a, b) if order == "loop first" else 0.0
    times = bench.time_batches(torch, lambda: t.matmul(a, b, out=out))  # type: ignore[attr-defined]
    if order == "suite first":
        loop = tuned_loop(torch, a, b)
    return 2 * size**3 / statistics.median(times) / 1e12, loop


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=8192)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    try:
        import torch
    except ImportError:
        print("bench_matmul_method: needs torch with CUDA (run it with that interpreter)")
        return 2
    from envkit.checks.suite import bench
    from envkit.checks.suite.skus import peak_for

    if not torch.cuda.is_available():
        print("bench_matmul_method: needs a CUDA GPU; none here, so no figure was measured")
        return 2
    name = torch.cuda.get_device_name(0)
    peak = peak_for(name)
    rows = []
    for dtype_name, dtype in (
        ("bf16", torch.bfloat16),
        ("fp16", torch.float16),
        ("tf32", torch.float32),
    ):
        torch.backends.cuda.matmul.allow_tf32 = dtype_name == "tf32"
        dense = getattr(peak, dtype_name, None) if peak else None
        for order in ("suite first", "loop first"):  # both orders: neither gets the warmer GPU
            suite, loop = _one(torch, bench, args.size, dtype, order)
            share = suite / dense if dense else None
            rows.append({"dtype": dtype_name, "order": order, "suite": suite, "loop": loop,
                         "ratio": suite / loop, "of_peak": share})  # fmt: skip
    print(f"{name}, torch {torch.__version__}")
    print("| dtype | order | suite TFLOP/s | tuned loop | suite / loop | suite of peak |")
    print("| --- | --- | --- | --- | --- | --- |")
    for r in rows:
        share = f"{r['of_peak']:.0%}" if r["of_peak"] else "-"
        figures = f"{r['suite']:.0f} | {r['loop']:.0f} | {r['ratio']:.3f}"
        print(f"| {r['dtype']} | {r['order']} | {figures} | {share} |")
    if args.json:
        args.json.write_text(json.dumps({"gpu": name, "rows": rows}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
