"""The Slurm job envkit submits, without a cluster: sbatch's options from the config and the
command line, the scripts each runtime gets (parsed by the real bash and sh), and every refusal
of a bad value before anything is written. The job itself runs in tests/e2e/test_slurm.py."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from envkit.cluster.slurm_job import (
    SlurmJob,
    cross_node_selected,
    plan_job,
    render_job,
    time_limit_s,
)
from envkit.errors import ConfigError, EnvkitError
from envkit.verify.request import SlurmRequest
from envkit.verify.resolve import VerifySettings, resolve_slurm
from tests.helpers import plan_text

WORKDIR = "/shared/envkit/run-abc"
BASE = "name: lab\nssh:\n  allow_no_keys: true\n"


def job_for(text: str, tmp_path: Path, **request: object) -> SlurmJob:
    """The job for envkit.yaml's text and verify --slurm's options (--python among them)."""
    plan = plan_text(BASE + text, tmp_path)
    python = request.pop("python", None)
    asked = SlurmRequest(**request)  # type: ignore[arg-type]
    slurm = resolve_slurm(plan, True, asked, python if isinstance(python, str) else None)
    return plan_job(plan.project, slurm, VerifySettings(), WORKDIR)


@pytest.mark.parametrize(("text", "seconds"), [
    ("30", 1800), ("30:15", 1815), ("1:00:00", 3600), ("2-0", 172800), ("1-2:30", 95400),
    ("1-02:00:05", 93605),
])  # fmt: skip
def test_time_limits_read_as_slurm_does(text: str, seconds: int) -> None:
    assert time_limit_s(text) == seconds


def test_sbatch_options_come_from_the_config_and_the_command_line(tmp_path: Path) -> None:
    job = job_for(
        "runtime:\n  gpus: 2\nslurm:\n  partition: gpu\n  account: vision\n  time: '45:00'\n",
        tmp_path,
        nodes=4,
    )
    assert "--nodes=4" in job.sbatch_args and "--partition=gpu" in job.sbatch_args
    assert "--account=vision" in job.sbatch_args and "--time=45:00" in job.sbatch_args
    assert "--gpus-per-node=2" in job.sbatch_args and job.nproc_per_node == 2
    assert f"--output={WORKDIR}/job.out" in job.sbatch_args
    by_hand = job_for("slurm:\n  partition: gpu\n", tmp_path, nodelist="n[1-2]", partition="debug")
    assert "--nodelist=n[1-2]" in by_hand.sbatch_args
    assert "--partition=debug" in by_hand.sbatch_args  # the command line wins
    none = job_for("runtime:\n  gpus: none\n", tmp_path)
    assert not any(a.startswith("--gpus") for a in none.sbatch_args) and none.nproc_per_node == 1


def _parses(shell: str, text: str, tmp_path: Path) -> None:
    script = tmp_path / "script"
    script.write_text(text)
    done = subprocess.run([shell, "-n", str(script)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("runtime", ["python", "pyxis", "apptainer"])
def test_each_runtime_gets_scripts_the_shells_parse(runtime: str, tmp_path: Path) -> None:
    image = "\n  image: /shared/images/lab.sif" if runtime == "apptainer" else ""
    job = job_for(f"slurm:\n  runtime: {runtime}{image}\n", tmp_path)
    files = render_job(job)
    _parses("bash", files["job.sh"], tmp_path)
    _parses("sh", files["node.sh"], tmp_path)
    node = files["node.sh"]
    if runtime == "pyxis":
        assert job.step_options == (
            "--container-image=envkit/lab:latest",
            f"--container-mounts={WORKDIR}:{WORKDIR}",
        )
        assert "--container-image=envkit/lab:latest" in files["job.sh"]
    if runtime == "apptainer":
        assert "command -v apptainer || command -v singularity" in node
        assert "exec --nv --bind" in node and "/shared/images/lab.sif" in node
    if runtime == "python":
        assert "command -v python3" in node and job.step_options == ()


@pytest.mark.parametrize(("request_", "phrase"), [
    ({"nodelist": "n1;touch /tmp/x"}, "--nodelist"),
    ({"nodelist": "n1\nn2"}, "--nodelist"),
    ({"nodelist": "-n1"}, "--nodelist"),  # sinfo and scontrol would read it as an option
    ({"time": "soon"}, "--time"),
    ({"partition": "a b"}, "--partition"),
    ({"python": "python3 -c evil"}, "--python"),
    ({"nodes": 0}, "--nodes"),
    ({"nodes": 2, "nodelist": "n1"}, "both given"),
    ({"gpus_per_node": 99}, "--gpus-per-node"),
    ({"runtime": "docker"}, "--slurm-runtime"),
])  # fmt: skip
def test_bad_options_are_refused_by_name(
    request_: dict[str, object], phrase: str, tmp_path: Path
) -> None:
    with pytest.raises(EnvkitError) as caught:
        job_for("", tmp_path, **request_)
    assert phrase in str(caught.value) and "fix:" in str(caught.value)


def test_a_run_folder_a_script_cannot_carry_is_refused(tmp_path: Path) -> None:
    plan = plan_text(BASE, tmp_path)
    slurm = resolve_slurm(plan, True, SlurmRequest())
    with pytest.raises(EnvkitError, match="cannot carry safely"):
        plan_job(plan.project, slurm, VerifySettings(), "/shared/my runs/$(id)")


@pytest.mark.parametrize(("text", "field"), [
    ("slurm:\n  runtime: apptainer\n", "slurm"),  # no image
    ("slurm:\n  time: tomorrow\n", "slurm.time"),
    ("slurm:\n  partition: 'gpu; rm -rf /'\n", "slurm.partition"),
    ("slurm:\n  python: 'python3 -c x'\n", "slurm.python"),
    ("slurm:\n  workdir: '/shared/$(id)'\n", "slurm.workdir"),
    ("slurm:\n  image: 'lab.sif\"'\n", "slurm.image"),
])  # fmt: skip
def test_bad_slurm_config_names_the_field(text: str, field: str, tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        plan_text(BASE + text, tmp_path)
    assert field in str(caught.value)


def test_the_config_workdir_is_resolved_beside_envkit_yaml(tmp_path: Path) -> None:
    plan = plan_text(BASE + "slurm:\n  workdir: runs\n", tmp_path)
    assert plan.slurm.workdir == str((tmp_path / "runs").resolve())


@pytest.mark.parametrize(("only", "skip", "selected"), [
    ((), (), True), (("tensor",), (), False), (("multigpu",), (), True),
    (("multigpu.cross_node",), (), True), ((), ("multigpu",), False),
    ((), ("multigpu.cross_node",), False), ((), ("tensor",), True),
])  # fmt: skip
def test_the_cross_node_step_follows_only_and_skip(
    only: tuple[str, ...], skip: tuple[str, ...], selected: bool
) -> None:
    assert cross_node_selected(VerifySettings(only=only, skip=skip)) is selected
