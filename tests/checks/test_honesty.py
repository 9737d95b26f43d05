"""Every check fails when the breakage it claims to catch is planted, and passes without it.

Breakages are planted with tests/plants (a sitecustomize on PYTHONPATH), so they act inside the
real runner's worker processes. Cases named fake_gpu run per-GPU code paths on CPU devices, and
cpu_only_torch plants a CPU-only build, so every case means the same on CI's machine (no GPU) and
on a GPU machine (scripts/gpu_evidence.py's hosts run this suite too)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.checks.conftest import RunChecks
from tests.helpers import status_of

# (check id, planted breakage, control plant (or None), settings, phrase in the failure)
CASES: list[tuple[str, str, str | None, dict[str, Any], str]] = [
    ("tensor.creation", "wrong_linspace", None, {}, "linspace"),
    ("tensor.attributes", "wrong_stride", None, {}, "stride"),
    ("tensor.broadcasting", "wrong_add", None, {}, "(3,1)+(1,2)"),
    ("tensor.inplace", "copying_add_", None, {}, "in-place"),
    ("tensor.views", "copying_transpose", None, {}, "transpose does not share storage"),
    ("tensor.numpy_bridge", "copying_numpy", None, {}, "numpy() does not share memory"),
    ("tensor.reductions", "wrong_clamp", None, {}, "clamp"),
    ("tensor.shape_ops", "wrong_cat", None, {}, "cat"),
    ("tensor.matmul_dtypes", "noisy_matmul", None, {}, "matmul on cpu is off"),
    # the same breakage in float64: a float64 reference would agree with it
    ("tensor.matmul_dtypes", "matmul_off_every_dtype", None, {}, "float64 matmul on cpu is off"),
    ("tensor.device_roundtrip", "fake_gpu,corrupting_to", "fake_gpu", {}, "round trip"),
    # an add broken on the host too: a CPU reference would share it
    ("tensor.device_roundtrip", "fake_gpu,wrong_add", "fake_gpu", {}, "n + 1 is not n + 1"),
    ("autograd.seed_examples", "wrong_dot", None, {}, "2*dot(x,x)"),
    ("autograd.accumulation", "noop_zero_", None, {}, "zero_() did not clear"),
    ("autograd.detach_no_grad", "detach_keeps_graph", None, {}, "detach"),
    ("autograd.control_flow", "doubled_backward", None, {}, "grad"),
    ("autograd.vjp", "doubled_backward", None, {}, "J^T v"),
    ("autograd.gradcheck", "wrong_tanh_grad", None, {}, "finite differences"),
    ("autograd.gpu", "fake_gpu,doubled_backward", "fake_gpu", {}, "grad"),
    # sin wrong on every device: a CPU comparison would agree with it
    ("autograd.gpu", "fake_gpu,sin_off_every_dtype", "fake_gpu", {}, "derived one"),
    ("cuda.available", "cpu_only_torch", None, {"require_gpu": True}, "CPU-only build"),
    # a swapped torch: another build, or another release, than the one envkit installed
    ("cuda.build", "cpu_only_torch", None, {"expected_cuda": "13.0"}, "not the CUDA 13.0 build"),
    ("cuda.build", "", None, {"expected_torch": "0.0.1"}, "0.0.1 installed by envkit"),
    ("cuda.device_count", "cpu_only_torch", None, {"expected_gpus": 1}, "1 expected"),
    ("cuda.driver_runtime", "old_driver", "new_driver", {}, "upgrade the driver"),
    ("cuda.arch_list", "arch_missing", "arch_present", {}, "sm_90"),
    ("cuda.cudnn", "no_cudnn", None, {}, "cuDNN is not available"),
    ("cuda.nccl", "no_nccl", "nccl_present", {}, "NCCL is missing"),
    (
        "multigpu.peer_access",
        "fake_gpu_x2,peer_access_ok,corrupting_to",
        "fake_gpu_x2,peer_access_ok",
        {},
        "corrupted",
    ),
    (
        "multigpu.data_parallel",
        "fake_gpu_x2,skewed_data_parallel",
        "fake_gpu_x2",
        {},
        "DataParallel",
    ),
    ("multigpu.ddp", "allreduce_wrong", None, {}, "not exact"),
    ("bench.cpu_matmul", "noisy_matmul", None, {}, "timed fp32 product is off"),
    # wrong for float64 too: a float64 reference would agree with it
    ("bench.cpu_matmul", "matmul_off_every_dtype", None, {}, "plain Python sums"),
    ("bench.cpu_memcpy", "corrupting_copy_", None, {}, "differs from its source"),
    (
        "bench.matmul_bf16",
        "bench_slow",
        "bench_fast",
        {"thresholds": {"bench.matmul_bf16": 0.5}},
        "below the threshold 50%",
    ),
]
# Checks whose breakage needs a container or GPU hardware: tested elsewhere (see the set below).
ELSEWHERE = {
    "system.shm": "tests/e2e/test_checks_in_containers.py (shm_size=1m)",
    "system.dataloader_workers": "tests/e2e/test_checks_in_containers.py (shm_size=1m)",
    "system.sshd": "tests/e2e/test_checks_in_containers.py (password login planted)",
    "system.mirrors": "tests/e2e/test_checks_in_containers.py (pip index differs)",
    "system.lock": "tests/checks/test_lock_check.py (a lock of this machine, one version changed)",
    "system.notebook": "tests/e2e/test_notebook.py (kernelspec removed in a running container)",
    "multigpu.ddp (hang)": "test_runner.py (a collective that never returns)",
    # The GPU hardware's own health: planted through the NVML stand-in, per fault class.
    **{
        f"gpu.{name}": "tests/checks/test_gpu_health.py (NVML stand-in scenarios)"
        for name in (
            "inventory",
            "ecc",
            "row_remap",
            "retired_pages",
            "inforom",
            "fabric",
            "cuda_env",
            "xid",
            "clocks",
            "pcie",
            "nvlink",
            "thermal",
            "processes",
        )
    },
    "gpu.recovery": "tests/checks/test_gpu_health_calibration.py (each recovery action)",
    "bench.p2p": "tests/checks/test_gpu_health_calibration.py (a corrupting and a slow pair)",
    "bench.host_device": "tests/checks/test_gpu_health.py (a link slower than its PCIe rate)",
    "bench.allreduce_busbw": "tests/checks/test_gpu_health.py (busbw far below NVLink's rate)",
    "stress.gpu": "tests/checks/test_gpu_health.py (a product that differs from the first)",
}


@pytest.mark.parametrize(
    ("check_id", "plant", "control", "config", "phrase"),
    CASES,
    ids=[f"{c[0]}-{c[1].replace(',', '+') or 'real'}" for c in CASES],
)
def test_planted_breakage_fails_the_check(
    run_checks: RunChecks,
    check_id: str,
    plant: str,
    control: str | None,
    config: dict[str, Any],
    phrase: str,
) -> None:
    broken = run_checks([check_id], plant or None, **config)
    status, message = status_of(broken, check_id)
    assert status == "fail", f"{check_id} with {plant or config} gave {status}: {message}"
    assert phrase in message
    # The same check without the breakage: it passes on a healthy (fake) device, and at least
    # does not fail on this machine's real one.
    kept = {k: v for k, v in config.items() if k == "thresholds"}
    healthy = run_checks([check_id], control, **kept)
    expected = {"pass"} if control else {"pass", "skip"}
    assert status_of(healthy, check_id)[0] in expected, status_of(healthy, check_id)


def test_every_check_has_an_honesty_test() -> None:
    from envkit.checks.core.registry import CHECKS
    from envkit.checks.suite import load

    load()
    covered = {c[0] for c in CASES} | {k.split(" ")[0] for k in ELSEWHERE}
    gpu_only = {
        "bench.matmul_fp16",
        "bench.matmul_tf32",
        "bench.matmul_fp32",  # same code as bf16
        "bench.memory_bandwidth",  # the same per-GPU judgement as matmul, on a CUDA copy
    }
    missing = set(CHECKS) - covered - gpu_only
    assert not missing, f"checks without an honesty test: {sorted(missing)}"


def test_every_check_states_a_reference_and_an_empty_one_is_refused() -> None:
    from envkit.checks.core.registry import CHECKS, check
    from envkit.checks.suite import load

    load()
    assert all(spec.reference.strip() for spec in CHECKS.values())
    with pytest.raises(ValueError, match="needs a reference"):
        check("tensor.unreferenced", reference=" ")


def test_a_cpu_without_a_bf16_kernel_checks_the_other_dtypes_and_says_bf16_was_not(
    run_checks: RunChecks,
) -> None:
    """Debian's aarch64 torch 1.13 under emulation has no bf16 matmul kernel for the CPU: the
    check still judges float64 and float32, names bfloat16 as not checked, and a wrong float32
    product beside it still fails."""
    report = run_checks(["tensor.matmul_dtypes"], "no_bf16_kernel")
    status, message = status_of(report, "tensor.matmul_dtypes")
    assert status == "pass", message
    assert "float64@cpu, float32@cpu" in message and "bfloat16@cpu (" in message
    assert "not checked" in message and "bfloat16@cpu," not in message.split(";")[0]
    broken = run_checks(["tensor.matmul_dtypes"], "no_bf16_kernel,noisy_matmul")
    assert status_of(broken, "tensor.matmul_dtypes")[0] == "fail"
    # Any other failure of the bf16 product is the check's error, as before.
    other = run_checks(["tensor.matmul_dtypes"], "bf16_broken")
    assert status_of(other, "tensor.matmul_dtypes")[0] == "error"
