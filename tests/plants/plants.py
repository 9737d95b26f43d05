"""Breakages planted into torch and the checks' view of the machine, one per name.

Names starting with fake_gpu run per-GPU code paths on CPU devices, and cpu_only_torch makes torch
a CPU-only build: the cases that use them behave the same on a machine with GPUs (a real GPU is
hidden first) as on CI's machine without one, so the honesty suite also runs on a GPU machine."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

import torch

from envkit.checks import bench, devices, fingerprint
from envkit.checks.registry import Skip

H100 = "NVIDIA H100 80GB HBM3"


def _hide_real_gpus() -> None:
    # Read by CUDA at its first use, after this plant: torch code the checks call for real
    # (DataParallel, .to()) then finds no GPU rather than one the fake devices do not describe.
    os.environ["CUDA_VISIBLE_DEVICES"] = ""


def _cpu_only_torch() -> None:
    _hide_real_gpus()
    torch.version.cuda = None
    torch.cuda.is_available = lambda: False
    torch.cuda.device_count = lambda: 0


def _fake_gpus(count: int, name: str = H100) -> None:
    _hide_real_gpus()

    def gpu_devices(ctx: Any, minimum: int = 1) -> list[Any]:
        if count < minimum:
            if (ctx.expected_gpus or 0) >= minimum:
                raise AssertionError(f"{count} GPU(s) visible, {ctx.expected_gpus} expected")
            raise Skip(f"needs {minimum} GPU(s), {count} visible")
        return [torch.device("cpu")] * count

    devices.gpu_devices = gpu_devices
    devices.device_name = lambda device: name
    devices.BENCH_MATMUL_SIZE = {"bf16": 64, "fp16": 64, "tf32": 64, "fp32": 64}


def _fake_cuda_runtime() -> None:
    torch.cuda.is_available = lambda: True
    torch.cuda.device_count = lambda: 1


def _wrap(owner: Any, name: str, make: Any) -> None:
    original = getattr(owner, name)
    setattr(owner, name, make(original))


def _doubled_backward(original: Any) -> Any:
    def backward(self: Any, gradient: Any = None, *args: Any, **kwargs: Any) -> Any:
        gradient = torch.ones_like(self) if gradient is None else gradient
        return original(self, gradient * 2, *args, **kwargs)

    return backward


class _WrongTanh(torch.autograd.Function):  # type: ignore[misc]  # torch has no stubs here
    @staticmethod
    def forward(ctx: Any, x: Any) -> Any:
        ctx.save_for_backward(x)
        return x.tanh()

    @staticmethod
    def backward(ctx: Any, grad: Any) -> Any:
        (x,) = ctx.saved_tensors
        return grad * (1 - x.tanh() ** 2) * 1.5  # off by half


def _old_driver() -> None:
    _fake_cuda_runtime()
    torch.version.cuda = "12.4"
    fingerprint.driver_cuda_version = lambda: "11.8"
    fingerprint.driver_version = lambda: "520.61.05"


def _new_driver() -> None:
    _old_driver()
    fingerprint.driver_cuda_version = lambda: "12.8"
    fingerprint.driver_version = lambda: "570.124.06"


def _arch_present() -> None:
    _fake_cuda_runtime()
    torch.cuda.get_arch_list = lambda: ["sm_80", "sm_90"]
    torch.cuda.get_device_capability = lambda index=0: (9, 0)


def _nccl_present() -> None:
    _fake_cuda_runtime()
    torch.cuda.nccl.version = lambda: (2, 21, 5)


def _arch_missing() -> None:
    _fake_cuda_runtime()
    torch.cuda.get_arch_list = lambda: ["sm_70", "sm_80"]
    torch.cuda.get_device_capability = lambda index=0: (9, 0)


def _no_cudnn() -> None:
    _fake_cuda_runtime()
    torch.backends.cudnn.is_available = lambda: False


def _no_nccl() -> None:
    _fake_cuda_runtime()

    def version() -> Any:
        raise RuntimeError("NCCL is not compiled in")

    torch.cuda.nccl.version = version


def _allreduce(mode: str) -> None:
    import torch.distributed as dist

    def make(original: Any) -> Any:
        def all_reduce(tensor: Any, *args: Any, **kwargs: Any) -> Any:
            if mode == "hang":
                time.sleep(3600)
            result = original(tensor, *args, **kwargs)
            tensor.add_(1)
            return result

        return all_reduce

    _wrap(dist, "all_reduce", make)


def _bench(seconds: float) -> None:
    _fake_gpus(1)
    torch.cuda.is_bf16_supported = lambda: True
    bench._cuda = lambda ctx: torch
    bench.time_cuda = lambda torch_, fn, **kwargs: [seconds] * 30


def _segfault() -> None:
    import os
    import signal

    def crash(*args: Any, **kwargs: Any) -> Any:
        os.kill(os.getpid(), signal.SIGSEGV)

    torch.eye = crash


class _SkewedDataParallel(torch.nn.Module):  # type: ignore[misc]  # torch has no stubs here
    def __init__(self, module: Any, device_ids: Any = None) -> None:
        super().__init__()
        self.module = module

    def forward(self, x: Any) -> Any:
        return self.module(x) + 1e-2


def _corrupting_to(original: Any) -> Any:
    def to(self: Any, *args: Any, **kwargs: Any) -> Any:
        moved = original(self, *args, **kwargs)
        return moved + 1e-3 if moved.is_floating_point() else moved

    return to


def _noisy_matmul(original: Any) -> Any:
    return lambda a, b: original(a, b) * (1.0 if a.dtype == torch.float64 else 1.01)


def _slightly_off(original: Any) -> Any:
    """Wrong by one part in a thousand for every dtype, float64 included: a reference computed
    with the same op would agree with it, an independent one does not."""
    return lambda *args, **kwargs: original(*args, **kwargs) * 1.001


def _twice_as_slow(original: Any) -> Any:
    """The op, then a sleep as long as it took: every call costs twice its own time."""

    def slow(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        result = original(*args, **kwargs)
        time.sleep(time.perf_counter() - start)
        return result

    return slow


PLANTS: dict[str, Callable[[], Any]] = {
    "fake_gpu": lambda: _fake_gpus(1),
    "fake_gpu_x2": lambda: _fake_gpus(2),
    "cpu_only_torch": _cpu_only_torch,
    "wrong_linspace": lambda: _wrap(torch, "linspace", lambda o: lambda *a, **k: o(*a, **k) * 1.01),
    "wrong_stride": lambda: setattr(torch.Tensor, "stride", lambda self, *a: (1,) * self.dim()),
    "wrong_add": lambda: _wrap(torch.Tensor, "__add__", lambda o: lambda a, b: o(o(a, b), 1)),
    "copying_add_": lambda: setattr(torch.Tensor, "add_", lambda self, other: self + other),
    "copying_transpose": lambda: _wrap(
        torch.Tensor, "transpose", lambda o: lambda s, *a: o(s, *a).clone()
    ),
    "copying_numpy": lambda: _wrap(torch.Tensor, "numpy", lambda o: lambda s, *a, **k: o(s).copy()),
    "wrong_clamp": lambda: setattr(torch, "clamp", lambda x, lo=None, hi=None: x),
    "wrong_cat": lambda: setattr(torch, "cat", lambda tensors, dim=0: tensors[0]),
    "noisy_matmul": lambda: _wrap(torch.Tensor, "__matmul__", _noisy_matmul),
    "matmul_off_every_dtype": lambda: _wrap(torch.Tensor, "__matmul__", _slightly_off),
    "sin_off_every_dtype": lambda: _wrap(torch.Tensor, "sin", _slightly_off),
    "wrong_dot": lambda: _wrap(torch, "dot", lambda o: lambda a, b: o(a, b) * 2),
    "doubled_backward": lambda: _wrap(torch.Tensor, "backward", _doubled_backward),
    "noop_zero_": lambda: setattr(torch.Tensor, "zero_", lambda self: self),
    "detach_keeps_graph": lambda: setattr(torch.Tensor, "detach", lambda self: self),
    "wrong_tanh_grad": lambda: setattr(torch, "tanh", _WrongTanh.apply),
    "old_driver": _old_driver,
    "new_driver": _new_driver,
    "arch_present": _arch_present,
    "nccl_present": _nccl_present,
    "arch_missing": _arch_missing,
    "no_cudnn": _no_cudnn,
    "no_nccl": _no_nccl,
    "allreduce_wrong": lambda: _allreduce("wrong"),
    "allreduce_hangs": lambda: _allreduce("hang"),
    "bench_slow": lambda: _bench(1.0),
    "bench_fast": lambda: _bench(2 * 64**3 / (0.9 * 989e12)),  # 90% of an H100's bf16 peak
    "segfault_in_eye": _segfault,
    "corrupting_to": lambda: _wrap(torch.Tensor, "to", _corrupting_to),
    "skewed_data_parallel": lambda: setattr(torch.nn, "DataParallel", _SkewedDataParallel),
    "peer_access_ok": lambda: setattr(torch.cuda, "can_device_access_peer", lambda i, j: True),
    "corrupting_copy_": lambda: _wrap(
        torch.Tensor, "copy_", lambda o: lambda self, src, *a, **k: o(self, src + 1, *a, **k)
    ),
    "slow_matmul": lambda: _wrap(torch.Tensor, "__matmul__", _twice_as_slow),
    "slow_copy_": lambda: _wrap(torch.Tensor, "copy_", _twice_as_slow),
    "other_torch_release": lambda: setattr(torch, "__version__", "9.9.9+planted"),
}


def apply(spec: str) -> None:
    for name in spec.split(","):
        PLANTS[name]()
