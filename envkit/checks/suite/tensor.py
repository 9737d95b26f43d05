"""tensor.*: tensor operations with known answers (the seeds' examples), on CPU and each GPU."""

from __future__ import annotations

from typing import Any, Callable, List, Tuple

from ..core import devices
from ..core.context import Context
from ..core.registry import Skip, check, ensure

# (rtol, atol) per dtype, as torch.testing.assert_close uses them; tf32 and reduced precision
# matmuls of K=256 need more room than elementwise defaults.
TOLERANCE = {
    "float64": (1e-12, 1e-12),  # integer inputs: any summation order is exact
    "float32": (1e-4, 1e-4),
    "tf32": (5e-3, 5e-3),
    "float16": (1e-2, 1e-2),
    "bfloat16": (5e-2, 5e-2),
}


def _torch() -> Any:
    import torch

    return torch


def _raises(call: Callable[[], object], errors: Any, message: str) -> None:
    """CALL must raise one of ERRORS (documented refusals); AssertionError(MESSAGE) if not."""
    try:
        call()
    except errors:
        return
    raise AssertionError(message)


@check("tensor.creation", reference="known answers written in the check (the seeds' examples)")
def creation(ctx: Context) -> str:
    """Catches broken creation ops: tensor/zeros/ones/empty/full/eye/arange/linspace/logspace,
    rand/randn ranges, *_like and new_* keeping dtype and shape."""
    torch = _torch()
    ensure(torch.tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]], "torch.tensor")
    ensure(torch.zeros(1, 2, 3, 4, 5).shape == (1, 2, 3, 4, 5), "zeros shape")
    ensure(torch.zeros(2, 3).sum().item() == 0 and torch.ones(2, 3).sum().item() == 6, "zeros/ones")
    ensure(torch.empty(3, 4).shape == (3, 4), "empty shape")
    ensure(torch.full((1, 2, 3), 42).eq(42).all().item(), "full")
    ensure(torch.eye(3).trace().item() == 3 and torch.eye(3, 4).shape == (3, 4), "eye")
    ensure(torch.arange(12).tolist() == list(range(12)), "arange")
    ensure(torch.arange(0, 1, 0.3).numel() == 4, "arange counts ceil((end-start)/step)")
    ensure(
        torch.allclose(torch.linspace(0, 1, 5), torch.tensor([0, 0.25, 0.5, 0.75, 1.0])), "linspace"
    )
    ensure(torch.allclose(torch.logspace(0, 2, 3), torch.tensor([1.0, 10.0, 100.0])), "logspace")
    torch.manual_seed(1729)
    r = torch.rand(1000)
    ensure(bool((r >= 0).all() and (r < 1).all()), "rand outside [0, 1)")
    n = torch.randn(10000)
    ensure(abs(n.mean().item()) < 0.1 and abs(n.std().item() - 1) < 0.1, "randn not ~N(0,1)")
    x = torch.zeros(4, 2, dtype=torch.long)
    ensure(
        torch.ones_like(x).dtype == torch.long and torch.full_like(x, 7).sum().item() == 56,
        "*_like",
    )
    ensure(torch.randint_like(x, 1, 4).min().item() >= 1, "randint_like range")
    y = x.new_ones(1, 4)
    ensure(y.dtype == torch.long and y.shape == (1, 4), "new_ones keeps dtype")
    d = torch.tensor([1.0]).new_ones(4, 3, dtype=torch.double)
    ensure(d.dtype == torch.float64, "new_ones dtype override")
    return "creation ops give their documented values"


@check("tensor.attributes", reference="known answers written in the check: shapes, strides, dtypes")
def attributes(ctx: Context) -> str:
    """Catches wrong metadata: ndim, shape, stride, dtype, device, storage sharing, grad."""
    torch = _torch()
    a = torch.zeros(2, 3, 4)
    ensure(a.ndim == 3 and a.shape == (2, 3, 4) and a.size() == torch.Size([2, 3, 4]), "ndim/shape")
    ensure(a.stride() == (12, 4, 1), f"stride {a.stride()} != (12, 4, 1)")
    ensure(
        a.dtype == torch.float32 and a.device.type == "cpu" and a.grad is None, "dtype/device/grad"
    )
    ensure(a.numel() == 24, "numel")
    b = a.view(6, 4)
    ensure(b.data_ptr() == a.data_ptr(), "view does not share storage")
    ensure(torch.tensor([1, 2]).dtype == torch.int64, "integer default dtype")
    return "metadata as documented"


@check(
    "tensor.broadcasting", reference="known answers written in the check (the seed's (3,1)+(1,2))"
)
def broadcasting(ctx: Context) -> str:
    """Catches broken broadcasting: the seed's (3,1)+(1,2) example; incompatible shapes raise."""
    torch = _torch()
    a = torch.arange(3).reshape((3, 1))
    b = torch.arange(2).reshape((1, 2))
    ensure((a + b).tolist() == [[0, 1], [1, 2], [2, 3]], f"(3,1)+(1,2) gave {(a + b).tolist()}")
    ensure((torch.ones(4, 3, 2) * torch.rand(3, 1)).shape == (4, 3, 2), "(4,3,2)*(3,1)")
    _raises(lambda: torch.ones(4, 3, 2) * torch.rand(3), RuntimeError, "(4,3,2)*(3,) did not raise")
    x = torch.tensor([1, 2, 3, 4, 5])
    y = torch.tensor([2, 2, 2, 2, 2])
    ensure((x + y).tolist() == [3, 4, 5, 6, 7] and (x * y).tolist() == [2, 4, 6, 8, 10], "+ and *")
    ensure(
        (x**y).tolist() == [1, 4, 9, 16, 25] and (x - y).tolist() == [-1, 0, 1, 2, 3], "** and -"
    )
    return "(3,1)+(1,2) broadcasts; incompatible shapes raise"


@check(
    "tensor.inplace",
    reference="known answers written in the check, and the tensor's identity and address",
)
def inplace(ctx: Context) -> str:
    """Catches in-place ops that copy or miscompute: add_, z[:] = ..., out=, identity kept."""
    torch = _torch()
    a = torch.ones(3)
    before = id(a), a.data_ptr()
    a.add_(torch.ones(3))
    a[:] = a + 1
    a += 1
    ensure((id(a), a.data_ptr()) == before, "in-place ops changed the tensor's identity")
    ensure(a.tolist() == [4.0, 4.0, 4.0], f"in-place arithmetic gave {a.tolist()}")
    out = torch.empty(3)
    torch.add(a, a, out=out)
    ensure(out.tolist() == [8.0, 8.0, 8.0], "add(out=)")
    b = torch.tensor([0.0, 1.5708])
    torch.sin_(b)
    ensure(abs(b[1].item() - 1.0) < 1e-4, "sin_")
    alias = b
    alias[0] = 561
    ensure(b[0].item() == 561, "assignment is not an alias")
    copy = b.clone()
    b[0] = 0
    ensure(copy[0].item() == 561, "clone shares memory")
    return "in-place ops keep identity and compute right"


@check("tensor.views", reference="storage addresses, and known answers written in the check")
def views(ctx: Context) -> str:
    """Catches broken views: transpose shares storage, view on a non-contiguous tensor raises,
    contiguous() copies."""
    torch = _torch()
    a = torch.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 5.0]])
    b = a.transpose(0, 1)
    a[1, 2] = 555
    ensure(b[2, 1].item() == 555, "transpose does not share storage")
    ensure(not b.is_contiguous(), "a transpose reports contiguous")
    _raises(lambda: b.view(1, -1), RuntimeError, "view() on a non-contiguous tensor did not raise")
    c = b.contiguous()
    ensure(c.is_contiguous() and c.data_ptr() != a.data_ptr(), "contiguous() did not copy")
    ensure(c.view(1, -1).tolist() == [[1.0, 2.0, 2.0, 4.0, 3.0, 555.0]], "contiguous().view order")
    ensure(torch.arange(6).view(-1, 1).shape == (6, 1), "view(-1, 1)")
    return "views share storage; non-contiguous view raises"


@check("tensor.numpy_bridge", reference="values seen through numpy after a change on either side")
def numpy_bridge(ctx: Context) -> str:
    """Catches a broken numpy bridge: on CPU, numpy() and from_numpy() share memory."""
    torch = _torch()
    try:
        import numpy as np
    except ImportError:
        raise Skip("numpy is not installed (optional)") from None
    t = torch.ones(5)
    n = t.numpy()
    t.add_(1)
    ensure(n.tolist() == [2.0] * 5, "numpy() does not share memory")
    arr = np.ones(3)
    back = torch.from_numpy(arr)
    np.add(arr, 1, out=arr)
    ensure(back.tolist() == [2.0, 2.0, 2.0], "from_numpy() does not share memory")
    ensure(torch.tensor(arr).data_ptr() != back.data_ptr(), "torch.tensor() should copy")
    return "numpy bridge shares memory on CPU"


@check("tensor.reductions", reference="known answers written in the check")
def reductions(ctx: Context) -> str:
    """Catches wrong reductions: max with indices, nonzero, clamp, sum, item."""
    torch = _torch()
    x = torch.tensor([[1, 9, 3], [7, 2, 8]])
    values, indices = torch.max(x, dim=1)
    ensure(values.tolist() == [9, 8] and indices.tolist() == [1, 2], "max with indices")
    ensure(torch.nonzero(torch.tensor([0, 3, 0, 4])).flatten().tolist() == [1, 3], "nonzero")
    ensure(torch.clamp(torch.tensor([-2, 0, 5]), -1, 3).tolist() == [-1, 0, 3], "clamp")
    ensure(x.sum().item() == 30 and torch.tensor([2.5]).item() == 2.5, "sum/item")
    _raises(x.item, (ValueError, RuntimeError), "item() on a multi-element tensor did not raise")
    return "reductions give known answers"


@check("tensor.shape_ops", reference="known answers written in the check")
def shape_ops(ctx: Context) -> str:
    """Catches broken squeeze/unsqueeze/repeat/cat."""
    torch = _torch()
    s = torch.tensor([1.0, 2.0, 3.0])
    ensure(
        s.unsqueeze(1).shape == (3, 1)
        and torch.rand(3, 226, 226).unsqueeze(0).shape == (1, 3, 226, 226),
        "unsqueeze",
    )
    ensure(
        torch.rand(1, 20).squeeze(0).shape == (20,) and torch.rand(2, 2).squeeze(0).shape == (2, 2),
        "squeeze only removes extent-1 dims",
    )
    r = torch.tensor([1, 2, 3]).repeat(4, 2)
    ensure(r.shape == (4, 6) and r[3].tolist() == [1, 2, 3, 1, 2, 3], "repeat")
    ensure(torch.tensor([1, 2, 3]).repeat(4, 2, 1).shape == (4, 2, 3), "repeat 3d")
    a, b = torch.ones(2, 3), torch.zeros(2, 3)
    ensure(
        torch.cat((a, b), dim=0).shape == (4, 3) and torch.cat((a, b), dim=1).shape == (2, 6), "cat"
    )
    return "shape ops as documented"


@check(
    "tensor.device_roundtrip",
    reference="the host copy's own values, and n + 1 computed in plain Python",
)
def device_roundtrip(ctx: Context) -> str:
    """Catches host<->device copies that corrupt data, on each GPU."""
    torch = _torch()
    data = torch.randn(1 << 20)
    values = data.tolist()
    # Reference for the arithmetic: whole numbers plus one, in plain Python (CPU torch would
    # share a broken op with the device).
    counts = torch.arange(1 << 16, dtype=torch.float32)
    plus_one = [v + 1 for v in counts.tolist()]
    for device in devices.gpu_devices(ctx):
        back = data.to(device).to("cpu")
        ensure(back.tolist() == values, f"round trip through {device} changed the data")
        summed = (counts.to(device) + torch.ones_like(counts, device=device)).cpu().tolist()
        ensure(summed == plus_one, f"arithmetic on {device}: n + 1 is not n + 1")
    return "round trip exact and n + 1 right on every GPU"


# Odd sizes, so blocked kernels take their edge paths too; small enough for an exact reference
# in pure Python (about a million multiply-adds).
MATMUL_SHAPE = (96, 128, 80)


def _int_matrix(torch: Any, rows: int, cols: int, seed: int) -> Any:
    """Small integers: every product and partial sum is exact in float32 (and bf16 inputs are
    exact), so the reference below is exact whatever order a kernel sums in."""
    return torch.randint(-4, 5, (rows, cols), generator=torch.Generator().manual_seed(seed)).float()


def python_matmul(a: List[List[float]], b: List[List[float]]) -> List[List[float]]:
    """The reference: plain Python arithmetic, so it shares nothing with the op under test (a
    BLAS that is wrong for every dtype, float64 included, cannot agree with it)."""
    columns = list(zip(*b))
    return [[sum(x * y for x, y in zip(row, col)) for col in columns] for row in a]


def max_error(got: List[List[float]], reference: List[List[float]]) -> Tuple[float, float]:
    error = max(abs(g - r) for grow, rrow in zip(got, reference) for g, r in zip(grow, rrow))
    return error, max(abs(r) for row in reference for r in row)


def _matmul(torch: Any, a: Any, b: Any, dtype: Any, device: Any, tf32: bool) -> List[List[float]]:
    old = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = tf32  # pinned: the default changed across releases
    try:
        product: List[List[float]] = (
            (a.to(device, dtype) @ b.to(device, dtype)).double().cpu().tolist()
        )
        return product
    finally:
        torch.backends.cuda.matmul.allow_tf32 = old


NO_KERNEL = ("could not create a primitive descriptor", "not implemented for 'BFloat16'")


def _no_kernel(message: str) -> bool:
    """The two ways a CPU torch says it has no bf16 matmul for this CPU: oneDNN's, and ATen's."""
    return any(phrase in message for phrase in NO_KERNEL)


@check(
    "tensor.matmul_dtypes",
    timeout_s=120,
    reference="exact integer products computed in plain Python",
)
def matmul_dtypes(ctx: Context) -> str:
    """Catches wrong matmul results per dtype (fp64, fp32, bf16; tf32 and fp16 on a GPU), on
    CPU and on each GPU."""
    torch = _torch()
    rows, inner, cols = MATMUL_SHAPE
    a, b = _int_matrix(torch, rows, inner, 1), _int_matrix(torch, inner, cols, 2)
    reference = python_matmul(a.tolist(), b.tolist())
    targets = [torch.device("cpu")]
    try:
        gpus = devices.gpu_devices(ctx)
    except Skip:
        gpus = []
    done: List[str] = []
    absent: List[str] = []
    for device in targets + gpus:
        cases = [
            ("float64", torch.float64, False),
            ("float32", torch.float32, False),
            ("bfloat16", torch.bfloat16, False),
        ]
        if device in gpus:
            cases += [("tf32", torch.float32, True), ("float16", torch.float16, False)]
        for name, dtype, tf32 in cases:
            try:
                product = _matmul(torch, a, b, dtype, device, tf32)
            except RuntimeError as exc:
                # A CPU build without a bf16 kernel for this CPU (Debian's aarch64 torch 1.13
                # under oneDNN raises so): not checked, and said; a GPU's must work, and any
                # other failure is the check's error as before.
                if device in gpus or name != "bfloat16" or not _no_kernel(str(exc)):
                    raise
                absent.append(f"{name}@{device} ({str(exc).splitlines()[0][:80]})")
                continue
            error, scale = max_error(product, reference)
            rtol, atol = TOLERANCE[name]
            ensure(
                error <= atol * 16 + rtol * scale,
                f"{name} matmul on {device} is off by {error:.3g} (scale {scale:.3g})",
            )
            done.append(f"{name}@{device}")
    said = "matches an exact pure-Python reference: " + ", ".join(done)
    if absent:
        said += "; not checked, this torch has no kernel for it here: " + ", ".join(absent)
    return said
