"""The alert rules `envkit metrics --rules` ships, checked by promtool (the Prometheus project's
own tool): `check rules` on the file, and `test rules` with a fixture per alert, each with
series that must fire it and series that must not."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from envkit.metrics import catalogue as c
from envkit.metrics.rules import alerts, rules_yaml
from tests.metrics_world import promtool

NODE = {"target": "docker://node-b", "Hostname": "node-b"}
GPU = {**NODE, "gpu": "3", "UUID": "GPU-3", "pci_bus_id": "00000000:48:00.0",
       "model_name": "NVIDIA B200"}  # fmt: skip


def _series(family: c.Family, labels: dict[str, str], values: str) -> dict[str, str]:
    inside = ",".join(f'{k}="{v}"' for k, v in labels.items())
    return {"series": f"{family.name}{{{inside}}}", "values": values}


Fired = list[tuple[dict[str, str], str]]  # each alert's labels and summary


def _case(alert: str, inputs: list[dict[str, str]], at: str, fired: Fired,
          interval: str = "1m") -> dict[str, Any]:  # fmt: skip
    return {
        "interval": interval,
        "input_series": inputs,
        "alert_rule_test": [
            {
                "eval_time": at,
                "alertname": alert,
                "exp_alerts": [
                    {"exp_labels": labels, "exp_annotations": {"summary": summary}}
                    for labels, summary in fired
                ],
            }
        ],
    }


def _check(status: str, check: str, group: str) -> dict[str, str]:
    return {**NODE, "check": check, "group": group, "status": status}


def _on_gpu(gpu: str, check: str, status: str, **job: str) -> dict[str, str]:
    return {**GPU, "gpu": gpu, **job, "check": check, "status": status}


SLURM_JOB = {"hpc_job": "4242", "hpc_user": "alice"}
CASES = [
    _case(
        "EnvkitGpuFailing",
        [_series(c.GPU_CHECK_STATUS, _on_gpu("3", "gpu.ecc", "fail", **SLURM_JOB), "1x10"),
         _series(c.GPU_CHECK_STATUS, _on_gpu("3", "gpu.ecc", "pass", **SLURM_JOB), "0x10"),
         _series(c.GPU_CHECK_STATUS, _on_gpu("5", "gpu.xid", "fail"), "1x10"),
         _series(c.GPU_CHECK_STATUS, _on_gpu("4", "gpu.ecc", "fail", **SLURM_JOB), "0x10"),
         _series(c.GPU_CHECK_STATUS, _on_gpu("4", "gpu.ecc", "pass", **SLURM_JOB), "1x10")],
        "5m",
        [({**_on_gpu("3", "gpu.ecc", "fail", **SLURM_JOB), "severity": "critical"},
          "docker://node-b GPU 3 fails gpu.ecc under Slurm job 4242 of alice"),
         ({**_on_gpu("5", "gpu.xid", "fail"), "severity": "critical"},
          "docker://node-b GPU 5 fails gpu.xid")],
    ),
    _case(  # a failure one GPU's series carries alerts there, not here too
        "EnvkitGpuHealthCheckFailing",
        [_series(c.CHECK_STATUS, _check("fail", "gpu.inventory", "gpu"), "1x10"),
         _series(c.CHECK_STATUS, _check("fail", "gpu.ecc", "gpu"), "1x10"),
         _series(c.GPU_CHECK_STATUS, _on_gpu("3", "gpu.ecc", "fail"), "1x10"),
         _series(c.CHECK_STATUS, _check("pass", "gpu.pcie", "gpu"), "1x10"),
         _series(c.CHECK_STATUS, _check("fail", "gpu.pcie", "gpu"), "0x10"),
         _series(c.CHECK_STATUS, _check("fail", "system.shm", "system"), "1x10")],
        "5m",
        [({**_check("fail", "gpu.inventory", "gpu"), "severity": "critical"},
          "docker://node-b: GPU health check gpu.inventory fails")],
    ),
    _case(
        "EnvkitCheckFailing",
        [_series(c.CHECK_STATUS, _check("error", "system.shm", "system"), "1x10"),
         _series(c.CHECK_STATUS, _check("fail", "gpu.ecc", "gpu"), "1x10")],
        "5m",
        [({**_check("error", "system.shm", "system"), "severity": "warning"},
          "docker://node-b: check system.shm fails")],
    ),
    _case(
        "EnvkitGpuXidFailClass",
        [_series(c.XID_EVENTS, {**GPU, "xid": "79", "bucket": "RESET_GPU", "verdict": "fail"},
                 "1x10"),
         _series(c.XID_EVENTS, {**GPU, "xid": "13", "bucket": "RESTART_APP", "verdict": "warn"},
                 "4x10")],
        "5m",
        [({**GPU, "xid": "79", "bucket": "RESET_GPU", "verdict": "fail", "severity": "critical"},
          "docker://node-b GPU 3: XID 79 (RESET_GPU)")],
    ),
    _case(
        "EnvkitGpuBelowPeers",
        [_series(c.FIGURE_OF_PEERS, {**NODE, "check": "bench.matmul", "figure": "tflops",
                                     "unit": "TFLOP/s", "gpu": "3"}, "0.5x10"),
         _series(c.FIGURE_OF_PEERS, {**NODE, "check": "bench.matmul", "figure": "tflops",
                                     "unit": "TFLOP/s", "gpu": "2"}, "0.97x10")],
        "5m",
        [({**NODE, "check": "bench.matmul", "figure": "tflops", "unit": "TFLOP/s", "gpu": "3",
           "severity": "warning"},
          "docker://node-b GPU 3: bench.matmul tflops below its node's other GPUs")],
    ),
    _case(
        "EnvkitIdleMemberHoldsGpuMemory",
        [_series(c.IDLE_STOP, {"project": "lab"}, "3600x10"),
         *(
             _series(c.MEMBER_IDLE, {"project": "lab", "member": m, "container": f"lab-{m}"}, v)
             for m, v in (("alice", "4000x10"), ("bob", "4000x10"), ("carol", "10x10"))
         ),
         _series(c.MEMBER_GPU_MEMORY,
                 {"project": "lab", "member": "alice", "container": "lab-alice", "gpu": "0"},
                 "2147483648x10"),
         _series(c.MEMBER_GPU_MEMORY,
                 {"project": "lab", "member": "bob", "container": "lab-bob", "gpu": "1"},
                 "0x10"),
         _series(c.MEMBER_GPU_MEMORY,
                 {"project": "lab", "member": "carol", "container": "lab-carol", "gpu": "2"},
                 "1073741824x10")],
        "5m",
        [({"project": "lab", "member": "alice", "container": "lab-alice", "severity": "warning"},
          "lab: alice is idle past team.idle_stop and holds GPU memory")],
    ),
    _case(
        "EnvkitVerifyStale",
        [_series(c.RUN_TIMESTAMP, NODE, "0x1500"),
         _series(c.RUN_TIMESTAMP, {"target": "docker://fresh", "Hostname": "fresh"},
                 "80000x1500")],
        "1500m",  # 25 h after the epoch promtool's clock starts at
        [({**NODE, "severity": "warning"}, "docker://node-b: no verify or health run for 24 h")],
    ),
    _case(
        "EnvkitMetricsSourceDown",
        [_series(c.SOURCE_UP, {"source": "members"}, "0x10"),
         _series(c.SOURCE_UP, {"source": "history"}, "1x10")],
        "10m",
        [({"source": "members", "severity": "warning"},
          "envkit metrics cannot read its members")],
    ),
]  # fmt: skip


def test_the_rules_file_passes_promtool_check_rules(tmp_path: Path) -> None:
    rules = tmp_path / "envkit-rules.yml"
    rules.write_text(rules_yaml())
    checked = promtool("check", "rules", str(rules))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert f"SUCCESS: {len(alerts())} rules found" in checked.stdout, checked.stdout


def test_every_alert_has_a_promtool_unit_test_that_fires_it_and_spares_the_rest() -> None:
    assert sorted(case["alert_rule_test"][0]["alertname"] for case in CASES) == sorted(
        a.name for a in alerts()
    )


def test_promtool_unit_tests_of_every_alert_pass(tmp_path: Path) -> None:
    (tmp_path / "envkit-rules.yml").write_text(rules_yaml())
    tests = {"rule_files": ["envkit-rules.yml"], "evaluation_interval": "1m", "tests": CASES}
    (tmp_path / "tests.yml").write_text(yaml.safe_dump(tests, sort_keys=False))
    done = promtool("test", "rules", str(tmp_path / "tests.yml"))
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_broken_expectation_fails_promtool_so_the_unit_tests_can_fail(tmp_path: Path) -> None:
    (tmp_path / "envkit-rules.yml").write_text(rules_yaml())
    wrong = [dict(CASES[0], alert_rule_test=[dict(CASES[0]["alert_rule_test"][0], exp_alerts=[])])]
    tests = {"rule_files": ["envkit-rules.yml"], "evaluation_interval": "1m", "tests": wrong}
    (tmp_path / "tests.yml").write_text(yaml.safe_dump(tests, sort_keys=False))
    assert promtool("test", "rules", str(tmp_path / "tests.yml")).returncode != 0


@pytest.mark.parametrize("hours", [6, 48])
def test_the_stale_limit_is_the_one_asked_for(hours: float) -> None:
    stale = next(a for a in alerts(hours) if a.name == "EnvkitVerifyStale")
    assert stale.expr.endswith(f"> {hours * 3600:g}")


def test_every_rule_reads_families_of_the_catalogue() -> None:
    names = {f.name for f in c.FAMILIES}
    for alert in alerts():
        assert alert.families and {f.name for f in alert.families} <= names
        for family in alert.families:
            assert family.name in alert.expr, (alert.name, family.name)
