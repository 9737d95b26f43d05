"""autograd.*: gradients with known answers (the seeds' examples), gradcheck, and on each GPU."""

from __future__ import annotations

import math
from typing import Any, List

from ..core import devices
from ..core.context import Context
from ..core.registry import check, ensure


def _seed_examples(torch: Any, device: Any) -> None:
    x = torch.arange(4.0, device=device, requires_grad=True)
    y = 2 * torch.dot(x, x)
    ensure(y.item() == 28.0, f"2*dot(x,x) gave {y.item()}")
    y.backward()
    want = [4.0 * i for i in range(4)]  # d/dx 2x·x = 4x, in plain Python
    ensure(x.grad.tolist() == want, f"grad of 2*dot(x,x) is {x.grad.tolist()}, not 4x")
    w = torch.ones(2, 2, device=device, requires_grad=True)
    (3 * (w + 2) ** 2).mean().backward()
    ensure(
        torch.allclose(w.grad, torch.full((2, 2), 4.5, device=device)),
        f"mean(3(x+2)^2) grad {w.grad}",
    )
    z = torch.ones(2, 2, device=device, requires_grad=True)
    (3 * (z**2) ** 2).mean().backward()
    ensure(torch.allclose(z.grad, torch.full((2, 2), 3.0, device=device)), "z = 3(x^2)^2 grad")


@check("autograd.seed_examples", reference="known answers written in the check: 28, 4x, 4.5, 3.0")
def seed_examples(ctx: Context) -> str:
    """Catches wrong gradients: y = 2·dot(x, x) gives 4x; out = mean(3(x+2)²) gives 4.5."""
    import torch

    _seed_examples(torch, torch.device("cpu"))
    return "grad(2·dot(x,x)) = 4x; grad(mean(3(x+2)²)) = 4.5"


@check(
    "autograd.accumulation",
    reference="known answers written in the check: 4x after two calls, zeros after zero_()",
)
def accumulation(ctx: Context) -> str:
    """Catches gradients that do not accumulate across backward calls or do not reset on zero_()."""
    import torch

    x = torch.arange(4.0, requires_grad=True)
    (x * x).sum().backward()
    (x * x).sum().backward()
    ensure(x.grad.tolist() == [0.0, 4.0, 8.0, 12.0], f"accumulated grad {x.grad.tolist()}")
    x.grad.zero_()
    ensure(x.grad.tolist() == [0.0] * 4, "zero_() did not clear")
    x.sum().backward()
    ensure(x.grad.tolist() == [1.0] * 4, "grad after zero_")
    return "accumulates, and zero_() resets"


@check(
    "autograd.detach_no_grad",
    reference="the graph's own flags, and the input itself as the expected gradient",
)
def detach_no_grad(ctx: Context) -> str:
    """Catches detach/no_grad leaking into the graph."""
    import torch

    x = torch.arange(4.0, requires_grad=True)
    u = (x * x).detach()
    (u * x).sum().backward()
    ensure(torch.equal(x.grad, u), "detach: grad of u*x should be u")
    ensure(not u.requires_grad and u.grad_fn is None, "detach kept history")
    with torch.no_grad():
        w = x * 2
    ensure(not w.requires_grad, "no_grad still recorded a graph")
    a = torch.randn(2, 2)
    a = (a * 3) / (a - 1)
    ensure(not a.requires_grad, "requires_grad appeared from nowhere")
    a.requires_grad_(True)
    ensure((a * a).sum().grad_fn is not None, "requires_grad_ does not propagate")
    return "detach and no_grad stop the graph"


@check(
    "autograd.control_flow",
    reference="d/a divided in plain Python (f is linear along the branch taken)",
)
def control_flow(ctx: Context) -> str:
    """Catches wrong gradients through Python control flow (the seed's f(a): grad equals d/a)."""
    import torch

    def f(a: Any) -> Any:
        b = a * 2
        while b.norm() < 1000:
            b = b * 2
        return b if b.sum() > 0 else 100 * b

    torch.manual_seed(3)
    for _ in range(3):
        a = torch.randn(size=(), requires_grad=True)
        d = f(a)
        d.backward()
        # f is linear in a along the branch taken, so its gradient is d/a: divided in Python
        want = d.item() / a.item()
        ensure(abs(a.grad.item() - want) <= 1e-5 * abs(want), f"grad {a.grad.item()} != d/a {want}")
    return "gradients follow the branch taken"


@check("autograd.vjp", reference="2x·v in plain Python")
def vjp(ctx: Context) -> str:
    """Catches wrong vector-Jacobian products for non-scalar outputs."""
    import torch

    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * x
    v = [0.1, 1.0, 10.0]
    y.backward(torch.tensor(v))
    want = [2 * xi * vi for xi, vi in zip([1.0, 2.0, 3.0], v)]  # J = diag(2x), in plain Python
    got = x.grad.tolist()
    ensure(all(abs(g - w) <= 1e-5 * abs(w) for g, w in zip(got, want)), f"J^T v = {got}")
    return "J^T·v matches 2x·v"


@check(
    "autograd.gradcheck",
    timeout_s=120,
    reference="finite differences in float64 (no backward formula involved)",
)
def gradcheck(ctx: Context) -> str:
    """Catches analytic gradients that disagree with finite differences (float64 gradcheck)."""
    import torch

    torch.manual_seed(0)
    inputs = (
        torch.randn(4, 5, dtype=torch.float64, requires_grad=True),
        torch.randn(5, 3, dtype=torch.float64, requires_grad=True),
    )

    def fn(a: Any, b: Any) -> Any:
        return torch.tanh(a @ b).sum(dim=1) * torch.sigmoid(a).mean()

    # raise_exception=False: a wrong gradient is this check failing, not the check breaking.
    ensure(
        torch.autograd.gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=False),
        "analytic gradients of tanh(a@b)·sigmoid(a) disagree with finite differences",
    )
    conv = torch.nn.Conv2d(2, 2, 3).double()
    image = torch.randn(1, 2, 5, 5, dtype=torch.float64, requires_grad=True)
    ensure(
        torch.autograd.gradcheck(conv, (image,), raise_exception=False),
        "conv2d gradients disagree with finite differences",
    )
    return "float64 gradcheck passes for matmul/tanh/sigmoid and conv2d"


def sin_matmul_grad(w: List[List[float]]) -> List[List[float]]:
    """d/dW of sum(sin(W) @ W), worked out by hand and computed in plain Python:
    grad[p][q] = cos(W[p][q]) * rowsum(W)[q] + colsum(sin W)[p]."""
    size = len(w)
    row_sums = [sum(w[k]) for k in range(size)]
    sin_col_sums = [sum(math.sin(w[i][p]) for i in range(size)) for p in range(size)]
    return [
        [math.cos(w[p][q]) * row_sums[q] + sin_col_sums[p] for q in range(size)]
        for p in range(size)
    ]


@check(
    "autograd.gpu",
    reference="the gradient of sum(sin(W) @ W) derived by hand, computed with Python's math",
)
def gpu(ctx: Context) -> str:
    """Catches wrong gradients on a GPU: the seed examples on each device, and float64 grads of
    sum(sin(W) @ W)."""
    import torch

    gpus = devices.gpu_devices(ctx)
    torch.manual_seed(0)
    w = torch.randn(8, 8, dtype=torch.float64)
    expected = sin_matmul_grad(w.tolist())
    for device in gpus:
        _seed_examples(torch, device)
        w_gpu = w.to(device).requires_grad_(True)
        (w_gpu.sin() @ w_gpu).sum().backward()
        got = w_gpu.grad.cpu().tolist()
        error = max(abs(g - e) for grow, erow in zip(got, expected) for g, e in zip(grow, erow))
        ensure(
            error <= 1e-9,
            f"{device}: float64 gradient off by {error:.3g} from the hand-derived one",
        )
    return f"seed examples and float64 grads right on {len(gpus)} GPU(s)"
