"""Breakages planted into torch and the checks' view of the machine, one per name.

Names starting with fake_gpu run per-GPU code paths on CPU devices, and cpu_only_torch makes torch
a CPU-only build: the cases that use them behave the same on a machine with GPUs (a real GPU is
hidden first) as on CI's machine without one, so the honesty suite also runs on a GPU machine."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from typing import Any

import torch

from envkit.checks.core import devices, fingerprint
from envkit.checks.core.registry import Skip
from envkit.checks.suite import bench

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
    bench.MATMUL_SHAPES = ((64, 64, 64),)  # the benches' shape search: one small product
    devices.BENCH_COPY_BYTES = devices.BENCH_LINK_BYTES = 4 << 20


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
            if mode == "killed":  # the rank dies without a word, as a segfault would end it
                os.kill(os.getpid(), signal.SIGKILL)
            result = original(tensor, *args, **kwargs)
            tensor.add_(1)
            return result

        return all_reduce

    _wrap(dist, "all_reduce", make)


def _bench(seconds: float, gpus: int = 1) -> None:
    """Benches on fake GPUs, every call timed at `seconds` (a CPU has no CUDA events)."""
    _fake_gpus(gpus)
    torch.cuda.is_bf16_supported = lambda: True
    # The benches' own CUDA gate (bench, p2p and stress.gpu skip with bench.NO_CUDA_SKIP): the
    # fake GPUs pass it; cuda.* keeps its real gate.
    gate = devices.cuda_torch
    devices.cuda_torch = lambda ctx, skip_why: (
        torch if skip_why == bench.NO_CUDA_SKIP else gate(ctx, skip_why)
    )

    def timed(torch_: Any, fn: Any, **kwargs: Any) -> list[float]:
        fn()  # the work itself runs once (its result is checked), its time is the plant's
        return [seconds] * bench.BATCHES

    bench.time_batches = timed  # type: ignore[assignment]  # a stand-in for the timer
    torch.Tensor.pin_memory = lambda self, *args, **kwargs: self  # no CUDA to pin for


FAST_MATMUL_S = 2 * 64**3 / (0.9 * 989e12)  # a 64^3 product at 90 % of an H100's bf16 peak


def _one_slow_gpu() -> None:
    """Two fake GPUs, the second 40 % slower than the first at every timed call."""
    _bench(FAST_MATMUL_S, gpus=2)
    calls = {"n": 0}

    def timed(torch_: Any, fn: Any, **kwargs: Any) -> list[float]:
        calls["n"] += 1
        fn()
        slow = calls["n"] % 2 == 0  # the benches time GPU 0, then GPU 1
        return [FAST_MATMUL_S / (0.6 if slow else 1.0)] * bench.BATCHES

    bench.time_batches = timed  # type: ignore[assignment]  # a stand-in for the timer


def _busbw(gbs: float) -> None:
    """Two GPUs whose all-reduce measures `gbs` (NCCL needs real GPUs)."""
    from envkit.checks.suite import distributed

    _bench(1e-3, gpus=2)
    torch.cuda.is_available = lambda: True
    torch.cuda.device_count = lambda: 2
    size = distributed.SIZES["nccl"][0]
    # the seconds an all-reduce of SIZE takes at this busbw, by nccl-tests' formula turned round
    distributed.measure_allreduce = lambda world, backend: (
        size / (gbs * 1e9) * 2 * (world - 1) / world,
        size,
    )


def _stress_fault() -> None:
    """Every fourth product comes out one ulp-scale off: silent data corruption under load."""
    calls = {"n": 0}

    def make(original: Any) -> Any:
        def matmul(a: Any, b: Any, *args: Any, out: Any = None, **kwargs: Any) -> Any:
            calls["n"] += 1
            result = original(a, b, *args, out=out, **kwargs) if out is not None else original(a, b)
            if calls["n"] % 4 == 0:
                result.view(-1)[7] += 1.0
            return result

        return matmul

    _wrap(torch, "matmul", make)


def _stress_on_cpu() -> None:
    _bench(FAST_MATMUL_S, gpus=2)
    _fake_gpus(2, "CPU stand-in")


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


def _bf16_raises(message: str) -> Callable[[Any], Any]:
    """bfloat16 products on the CPU raise MESSAGE, the others are computed: oneDNN's "could not
    create a primitive descriptor iterator" is a CPU torch without a bf16 kernel for its CPU
    (Debian's aarch64 torch 1.13 under emulation); any other message, a real failure."""

    def wrap(original: Any) -> Any:
        def matmul(a: Any, b: Any) -> Any:
            if a.dtype == torch.bfloat16 and a.device.type == "cpu":
                raise RuntimeError(message)
            return original(a, b)

        return matmul

    return wrap


def _slightly_off(original: Any) -> Any:
    """Wrong by one part in a thousand for every dtype, float64 included: a reference computed
    with the same op would agree with it, an independent one does not."""
    return lambda *args, **kwargs: original(*args, **kwargs) * 1.001


def _five_times_as_slow(original: Any) -> Any:
    """The op, then a sleep four times as long as it took: every call costs five times its own
    time. Twice was not enough under CI's load: a baseline run beside another worker's build
    can itself be half as fast, and the planted slowdown then hid in that noise."""

    def slow(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        result = original(*args, **kwargs)
        time.sleep(4 * (time.perf_counter() - start))
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
    "no_bf16_kernel": lambda: _wrap(
        torch.Tensor, "__matmul__", _bf16_raises("could not create a primitive descriptor iterator")
    ),
    "bf16_broken": lambda: _wrap(
        torch.Tensor, "__matmul__", _bf16_raises("CUBLAS_STATUS_EXECUTION_FAILED")
    ),
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
    "ranks_killed": lambda: _allreduce("killed"),
    "bench_slow": lambda: _bench(1.0),
    "bench_slow_link": lambda: _bench((4 << 20) / 1e9),  # 1 GB/s over the link
    # device memory read + written at this many GB/s: 2 x 3 MiB per copy (the bench takes 3/4
    # of the 4 MiB a fake GPU offers)
    "memory_at_2100": lambda: _bench(2 * (3 << 20) / 2100e9),
    "memory_at_2900": lambda: _bench(2 * (3 << 20) / 2900e9),
    "bench_fast_link": lambda: _bench((4 << 20) / 50e9),  # 50 GB/s: 80 % of Gen5 x16
    "one_slow_gpu": _one_slow_gpu,
    "busbw_slow": lambda: _busbw(20.0),
    "busbw_fast": lambda: _busbw(400.0),
    "stress_fault": _stress_fault,
    "fake_gpu_x2_bench": lambda: _bench(FAST_MATMUL_S, gpus=2),
    "fake_gpu_x3_bench": lambda: _bench(FAST_MATMUL_S, gpus=3),
    # GPUs that are CPU devices with no published peak: the burn-in's own figures say nothing
    # of an H100, only whether every product was exact
    "stress_on_cpu": lambda: _stress_on_cpu(),
    "bench_fast": lambda: _bench(FAST_MATMUL_S),
    "segfault_in_eye": _segfault,
    "corrupting_to": lambda: _wrap(torch.Tensor, "to", _corrupting_to),
    "skewed_data_parallel": lambda: setattr(torch.nn, "DataParallel", _SkewedDataParallel),
    "peer_access_ok": lambda: setattr(torch.cuda, "can_device_access_peer", lambda i, j: True),
    "corrupting_copy_": lambda: _wrap(
        torch.Tensor, "copy_", lambda o: lambda self, src, *a, **k: o(self, src + 1, *a, **k)
    ),
    "slow_matmul": lambda: _wrap(torch.Tensor, "__matmul__", _five_times_as_slow),
    "slow_copy_": lambda: _wrap(torch.Tensor, "copy_", _five_times_as_slow),
    "other_torch_release": lambda: setattr(torch, "__version__", "9.9.9+planted"),
}


def apply(spec: str) -> None:
    for name in spec.split(","):
        PLANTS[name]()
