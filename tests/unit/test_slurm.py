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
from envkit.cluster.slurm_run import stage
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


@pytest.mark.parametrize("runtime", ["python", "pyxis", "apptainer", "charliecloud"])
def test_each_runtime_gets_scripts_the_shells_parse(runtime: str, tmp_path: Path) -> None:
    image = "\n  image: /shared/images/lab.sif" if runtime in ("apptainer", "charliecloud") else ""
    image += "\nruntime:\n  gpus: none" if runtime == "charliecloud" else ""
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
    if runtime == "charliecloud":  # the run's folder on a mount point a read-only image has
        assert "command -v ch-run" in node and '--bind "$dir:$at"' in node
        assert "--set-env /shared/images/lab.sif -- python3" in node
        assert '"$at/checks.zip" run' in node and '--out "$at/reports/$node.json"' in node


def test_a_bundles_squashfs_is_staged_in_the_run_folder_for_the_runtime(tmp_path: Path) -> None:
    plan = plan_text(BASE + "runtime:\n  gpus: none\n", tmp_path)
    bundle = Path("/media/usb/lab")
    slurm = resolve_slurm(plan, True, SlurmRequest(), None, bundle)
    assert (slurm.runtime, slurm.stage) == ("charliecloud", True)  # none asked: ch-run
    job = plan_job(plan.project, slurm, VerifySettings(), WORKDIR)
    assert job.staged_from == "/media/usb/lab/rootfs.sqfs"
    assert job.image == f"{WORKDIR}/rootfs.sqfs"  # where every node reads it
    # The environment's python by its path: pyxis and Apptainer do not read /ch/environment.
    assert job.python == f"{plan.python.bin_dir}/python" and job.python.startswith("/")
    asked = resolve_slurm(plan, True, SlurmRequest(), "/opt/other/bin/python3", bundle)
    assert asked.python == "/opt/other/bin/python3"  # --python still wins
    pyxis = resolve_slurm(plan, True, SlurmRequest(runtime="pyxis"), None, bundle)
    pyxis_job = plan_job(plan.project, pyxis, VerifySettings(), WORKDIR)
    assert pyxis_job.step_options[0] == f"--container-image={WORKDIR}/rootfs.sqfs"
    with pytest.raises(EnvkitError, match="never the bundle's image"):
        resolve_slurm(plan, True, SlurmRequest(runtime="python"), None, bundle)


def test_charliecloud_on_gpu_nodes_is_refused_with_the_runtimes_that_add_the_driver(
    tmp_path: Path,
) -> None:
    with pytest.raises(EnvkitError) as caught:
        job_for("slurm:\n  runtime: charliecloud\n  image: /shared/lab.sqfs\n", tmp_path)
    said = f"{caught.value} {caught.value.fix}"
    assert "NVIDIA driver" in said and "pyxis" in said and "--gpus-per-node 0" in said


def test_staging_links_or_copies_and_a_failed_copy_is_said(tmp_path: Path) -> None:
    source = tmp_path / "rootfs.sqfs"
    source.write_bytes(b"hsqs" + bytes(60))
    stage(source, tmp_path / "staged.sqfs", quiet=True)
    assert (tmp_path / "staged.sqfs").read_bytes() == source.read_bytes()
    with pytest.raises(EnvkitError, match=r"could not copy rootfs\.sqfs"):
        stage(source, tmp_path / "missing-folder" / "rootfs.sqfs", quiet=True)


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
    ("slurm:\n  runtime: charliecloud\n", "slurm"),  # no image
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
