"""The CPU example across an air gap: `envkit bundle --sign` (the real cosign signs its
manifest), made once for the module, then at a site whose envkit.yaml trusts the team's key:
- in a network namespace with no route (`unshare -n`, the real kernel's): the bundle checked and
  its image run through Charliecloud's real ch-run (`verify --bundle`), loaded into the engine
  (`envkit load`) and verified there; rebuilt from its wheels and .debs alone (`build --offline
  --from`, the build's steps with no network either) to the same lock;
- on a private Slurm cluster's node (`verify --slurm --bundle`, the SquashFS staged and run
  through ch-run), and as its HealthCheckProgram (`health --program --bundle --drain`);
- the rendered Kubernetes pods run by `podman kube play` from the bundle's image.tar;
- a bundle that differs from its manifest refused before anything in it runs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.e2e.conftest import ENV_IMAGE
from tests.e2e.engines import PODMAN_ROOTS, _unmount_under
from tests.e2e.images import E2E_NAME, copy_project, docker
from tests.helpers import envkit, envkit_offline
from tests.slurm_cluster import SlurmCluster

pytestmark = [pytest.mark.docker, pytest.mark.slow]


PASSWORD = "bundle-e2e-password"


@dataclass(frozen=True)
class Made:
    bundle: Path
    site: Path  # the receiving site's project: the team's envkit.yaml trusting its key
    keys: Path


@pytest.fixture(scope="module")
def made(env_image: str, project_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Made:
    for tool in ("ch-run", "ch-convert", "mksquashfs", "siftool", "unshare"):
        assert shutil.which(tool), f"{tool} is missing: `make system-deps` installs it"
    root = tmp_path_factory.mktemp("bundle")
    bundle, site = root / "bundle", root / "site"
    site.mkdir()
    env = {"COSIGN_PASSWORD": PASSWORD}
    subprocess.run(["cosign", "generate-key-pair"], cwd=root, env={**os.environ, **env}, check=True)
    done = envkit(
        "bundle", "-o", str(bundle), "--sign", str(root / "cosign.key"), "--sif",
        cwd=project_dir, env=env, timeout=1800,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert PASSWORD not in done.stdout + done.stderr
    assert "MB" in done.stdout and "bundle ready" in done.stdout
    config = copy_project(project_dir, site)
    shutil.copy(root / "cosign.pub", site / "cosign.pub")
    config.write_text(config.read_text() + "signing:\n  verify: cosign.pub\n")
    return Made(bundle, site, root)


def test_a_bundle_holds_the_image_its_lock_and_statements_signed(made: Made) -> None:
    manifest = json.loads((made.bundle / "MANIFEST.json").read_text())
    files = {entry["path"] for entry in manifest["files"]}
    assert {"image.tar", "rootfs.sqfs", "envkit.yaml", "envkit.lock", "sbom.cdx.json"} <= files
    assert "provenance.json" in files and (made.bundle / "MANIFEST.json.sig").is_file()
    assert any(name.startswith("wheels/tqdm-") for name in files), sorted(files)
    # jq is among what the build adds to the base: its .deb, and the index apt reads it by.
    assert any(name.startswith("debs/jq_") for name in files), sorted(files)
    assert "Package: jq\n" in (made.bundle / "debs" / "Packages").read_text()
    # The SIF (Debian's siftool): the SquashFS itself as its primary partition, and the SBOM.
    sif, squashfs = made.bundle / "rootfs.sif", made.bundle / "rootfs.sqfs"
    assert "rootfs.sif" in files
    listed = subprocess.run(["siftool", "list", str(sif)], capture_output=True, text=True)
    assert "FS (Squashfs/*System/amd64)" in listed.stdout, listed.stdout + listed.stderr
    assert "SBOM (cyclonedx-json)" in listed.stdout
    with subprocess.Popen(["siftool", "dump", "1", str(sif)], stdout=subprocess.PIPE) as dump:
        same = subprocess.run(["cmp", "-", str(squashfs)], stdin=dump.stdout, check=False)
    assert dump.returncode == 0 and same.returncode == 0, "the SIF's partition is not the SquashFS"


def test_a_bundle_crosses_an_air_gap_and_verifies_through_ch_run_and_the_engine(
    made: Made, tmp_path: Path
) -> None:
    bundle, site = made.bundle, made.site
    # No network at all: the suite through ch-run, from the SquashFS.
    probe = envkit_offline(
        "verify", "--bundle", str(bundle), "--no-bench", "--no-history", cwd=site
    )
    assert probe.returncode == 0, probe.stdout[-3000:] + probe.stderr[-3000:]
    assert "charliecloud://" in probe.stdout + probe.stderr

    # The engine's copy: loaded from the bundle, then verified, still offline.
    loaded = envkit_offline("load", str(bundle), cwd=site)
    assert loaded.returncode == 0 and ENV_IMAGE in loaded.stdout, loaded.stderr
    checked = envkit_offline(
        "verify", "--image", ENV_IMAGE, "--no-bench", "--no-history", cwd=tmp_path
    )
    assert checked.returncode == 0, checked.stdout[-3000:] + checked.stderr[-3000:]


# Stand-ins for Apptainer and enroot, which no Debian or PyPI package installs here: each takes
# its runtime's command line as envkit writes it and runs the image by the real ch-run, with
# none of the image's environment applied (as Apptainer's --cleanenv and enroot on a SquashFS
# made by ch-convert): envkit's own export of /ch/environment must give the suite its Python.
APPTAINER_STANDIN = """#!/bin/sh
[ "$1" = exec ] && [ "$2" = --cleanenv ] || { echo "stand-in: unexpected $*" >&2; exit 64; }
shift 2; [ "$1" = --nv ] && shift
image=$1; shift
echo "$image" >> "$0.log"
exec env -i USER="$(id -un)" {ch_run} --unset-env='*' "$image" -- "$@"
"""
ENROOT_STANDIN = """#!/bin/sh
state="$0.containers"; mkdir -p "$state"
case $1 in
  create) [ "$2" = --name ] || exit 64; echo "$4" > "$state/$3"; echo "$3" >> "$0.log" ;;
  start) [ "$2 $3" = "--mount /tmp:/tmp" ] || exit 64; image=$(cat "$state/$4") || exit 1
    shift 4; exec env -i USER="$(id -un)" {ch_run} --unset-env='*' "$image" -- "$@" ;;
  remove) [ "$2" = --force ] && rm "$state/$3" ;;
  *) exit 64 ;;
esac
"""


@pytest.mark.parametrize("runtime", ["apptainer", "enroot"])
def test_a_bundle_verifies_through_an_apptainer_or_enroot_standin_with_the_images_environment(
    made: Made, tmp_path: Path, runtime: str
) -> None:
    standin = tmp_path / runtime
    script = {"apptainer": APPTAINER_STANDIN, "enroot": ENROOT_STANDIN}[runtime]
    standin.write_text(script.replace("{ch_run}", str(shutil.which("ch-run"))))
    standin.chmod(0o755)
    image = made.bundle / "rootfs.sqfs"
    env = {"PATH": f"{tmp_path}:{os.environ['PATH']}"}
    args = ("verify", "--target", f"{runtime}://{image}", "--only", "tensor", "--no-history")
    report = tmp_path / "report.json"
    done = envkit(*args, "--json-file", str(report), cwd=made.site, env=env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    target = json.loads(report.read_text())["targets"][0]
    passed = [c for c in target["checks"] if c["status"] == "pass"]
    assert len(passed) >= 5, target["checks"]  # torch imported in the image's Python
    assert (tmp_path / f"{runtime}.log").read_text().strip() != ""  # the stand-in ran it
    if runtime == "enroot":  # its container, made for the run, removed after it
        assert list((tmp_path / "enroot.containers").iterdir()) == []


def test_a_bundle_rebuilds_with_no_network_to_the_same_lock(made: Made, tmp_path: Path) -> None:
    """`build --offline --from`: every version from the bundle's lock, every package from its
    wheels and .debs, envkit in a namespace with no route and the build's steps with no network
    at all; the rebuilt image's own lock is then the bundle's (`envkit diff` exits 0)."""
    tag = f"envkit-test/offline-rebuilt:{E2E_NAME}"
    try:
        built = envkit_offline(
            "build", "--offline", "--from", str(made.bundle), "--tag", tag, cwd=made.site
        )
        assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
        assert f"tagged {tag}" in built.stdout
        assert not (made.site / ".envkit" / "envkit" / "offline").exists()  # unstaged after
        rebuilt = tmp_path / "rebuilt.lock"
        locked = envkit("lock", "--tag", tag, "--lock-file", str(rebuilt), cwd=made.site)
        assert locked.returncode == 0, locked.stdout[-2000:] + locked.stderr[-2000:]
        same = envkit("diff", str(made.bundle / "envkit.lock"), str(rebuilt), cwd=made.site)
        assert same.returncode == 0, same.stdout[-3000:] + same.stderr[-3000:]
    finally:
        docker("rmi", "-f", tag, check=False)


def test_a_changed_bundle_is_refused_by_name_before_anything_runs(
    made: Made, tmp_path: Path
) -> None:
    """On a copy of hard links (the SquashFS and the image are never copied), with the one file
    changed written anew, so the module's bundle stays whole."""
    bundle = tmp_path / "bundle"
    subprocess.run(["cp", "-al", str(made.bundle), str(bundle)], check=True)
    readme = bundle / "README.md"
    text = readme.read_text()
    readme.unlink()
    readme.write_text(text.replace("bundle", "bundIe", 1))
    rebuild = ("build", "--offline", "--from", str(bundle))
    for args in (("verify", "--bundle", str(bundle)), ("load", str(bundle)), rebuild):
        refused = envkit_offline(*args, cwd=made.site)
        assert refused.returncode == 2, refused.stdout + refused.stderr
        assert "README.md: changed" in refused.stderr and "Traceback" not in refused.stderr
    # The manifest made anew to match (as a swap would): its signature no longer does.
    manifest = bundle / "MANIFEST.json"
    text = manifest.read_text()
    manifest.unlink()
    manifest.write_text(text + " ")
    refused = envkit_offline("verify", "--bundle", str(bundle), cwd=made.site)
    assert refused.returncode == 2 and "is not signed by the key in" in refused.stderr


def test_a_bundle_verifies_on_a_slurm_node_through_ch_run(made: Made, tmp_path: Path) -> None:
    """`verify --slurm --bundle` on a private Slurm cluster (a real slurmctld and slurmd): the
    SquashFS staged in the run's shared folder and run on the node through ch-run; the run's
    folder (SquashFS included) removed once it passed."""
    bundle, site = made.bundle, made.site
    cluster = SlurmCluster(tmp_path / "slurm", ("n1",))
    runs, report = tmp_path / "runs", tmp_path / "slurm.json"
    try:
        cluster.start()
        done = envkit(
            "verify", "--slurm", "--bundle", str(bundle), "--nodes", "1", "--workdir", str(runs),
            "--no-bench", "--no-history", "--json-file", str(report),
            cwd=site, env={"SLURM_CONF": str(cluster.conf)}, timeout=600,
        )  # fmt: skip
    finally:
        cluster.stop()
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (node,) = json.loads(report.read_text())["targets"]
    assert node["target"] == "slurm://node/n1" and node["summary"]["pass"] > 5, node["summary"]
    notes = node["environment"]["target_notes"]
    assert notes == [f"run through charliecloud from {bundle}/rootfs.sqfs"], notes
    assert list(runs.iterdir()) == [], "a run that passed leaves nothing behind"


def test_a_bundles_health_program_passes_a_node_and_drains_a_failing_one(
    made: Made, tmp_path: Path
) -> None:
    """`envkit health --program --bundle --drain` on a private Slurm cluster: the check runs in
    the bundle's image through ch-run (the node's python is never used) and passes n1; the
    program of a config the node cannot meet (900 GB of /dev/shm) says why in one line and
    drains n1 from outside the image, which `sinfo -R` shows."""
    strict = tmp_path / "strict"
    strict.mkdir()
    config = copy_project(made.site, strict)
    text = config.read_text().replace("shm_size: 2gb", "shm_size: 900gb")
    config.write_text(
        text.replace("require_gpu: false\n", "require_gpu: false\n  min_shm: 900gb\n")
    )
    programs = {}
    for name, site in (("good", made.site), ("strict", strict)):
        programs[name] = tmp_path / name / "envkit-health"
        done = envkit(
            "health", "--program", str(programs[name]), "--bundle", str(made.bundle), "--drain",
            cwd=site,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        assert "ch-run" in programs[name].read_text()
    cluster = SlurmCluster(tmp_path / "slurm", ("n1",))
    try:
        cluster.start()
        good = cluster.run("srun", "-w", "n1", str(programs["good"]), timeout=120)
        assert good.returncode == 0, good.stdout + good.stderr
        assert good.stdout.startswith("envkit: healthy"), good.stdout
        bad = cluster.run("srun", "-w", "n1", str(programs["strict"]), timeout=120)
        assert bad.returncode != 0, bad.stdout + bad.stderr
        (line,) = bad.stdout.strip().splitlines()  # one line saying why
        assert line.startswith("envkit: ") and "system.shm" in line, line
        reasons = cluster.run("sinfo", "-R", "-h", "-o", "%N|%E").stdout
        assert "n1|envkit: " in reasons, reasons
    finally:
        cluster.stop()


def test_the_rendered_pods_run_under_podman_kube_play_from_the_bundles_image(
    made: Made, tmp_path: Path
) -> None:
    """`podman kube play` (Debian's podman, the nearest real kubelet here) runs the rendered
    preflight pod and the verify Job's pod from the bundle's image.tar, its ConfigMap mounted.
    What a kubelet does and podman 4.3 does not is done here, said: the downward API's
    spec.nodeName and `$(NODE_NAME)` in args become the node's name, and the Job's template is
    played as the Pod the Job controller would make of it."""
    rendered = tmp_path / "k8s"
    done = envkit("k8s", "render", "--out", str(rendered), cwd=made.site)
    assert done.returncode == 0, done.stderr
    root = PODMAN_ROOTS / f"{os.getpid()}-kube"  # see engines.py; podman takes 50 characters
    root.mkdir(parents=True)
    conf = root / "containers.conf"  # rootful podman raises rlimits, which needs
    # CAP_SYS_RESOURCE; a CI container may not have it, so the limits are set below it
    conf.write_text('[containers]\ndefault_ulimits = ["nofile=4096:4096", "nproc=4096:4096"]\n')
    storage = ["--root", str(root / "storage"), "--runroot", str(root / "run")]

    def podman(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["podman", *storage, *args], capture_output=True, text=True, timeout=timeout,
            env={**os.environ, "CONTAINERS_CONF": str(conf)}, check=False,
        )  # fmt: skip

    try:
        loaded = podman("load", "-i", str(made.bundle / "image.tar"))
        assert loaded.returncode == 0, loaded.stderr
        preflight = _as_played(yaml.safe_load((rendered / "preflight-pod.yaml").read_text()))
        name = preflight["metadata"]["name"]
        _play(podman, preflight, rendered, tmp_path / "preflight.yaml")
        training = f"{name}-training"  # starts only once the preflight init container passed
        assert podman("wait", training).stdout.strip() == "0"
        assert "the training starts here" in podman("logs", training).stdout

        job = yaml.safe_load((rendered / "job.yaml").read_text())
        pod = _as_played(
            {"apiVersion": "v1", "kind": "Pod", **job["spec"]["template"]},
            name=f"{job['metadata']['name']}-0",
        )
        _play(podman, pod, rendered, tmp_path / "job-pod.yaml")
        checks = f"{pod['metadata']['name']}-checks"
        assert podman("wait", checks).stdout.strip() == "0", podman("logs", checks).stdout[-3000:]
        lines = podman("logs", checks).stdout.splitlines()
    finally:
        podman("pod", "rm", "--all", "--force")
        podman("system", "reset", "--force")
        _unmount_under(root)
        shutil.rmtree(root, ignore_errors=True)
    logs = tmp_path / "logs.txt"
    name = pod["metadata"]["name"]  # kubectl's --prefix: the pod, then its container
    logs.write_text("".join(f"[pod/{name}/checks] {line}\n" for line in lines))
    out = tmp_path / "merged.json"
    merged = envkit(
        "k8s", "merge", str(logs), "--expect", "1", "--json-file", str(out), cwd=made.site
    )
    assert merged.returncode == 0, merged.stdout + merged.stderr
    (row,) = json.loads(out.read_text())["targets"]
    assert row["target"] == f"k8s://node/{NODE}" and row["summary"]["pass"] > 5, row["summary"]
    statuses = {c["id"]: c["status"] for c in row["checks"]}
    assert statuses["system.sshd"] == "skip", "a pod's command runs no entrypoint, so no sshd"


NODE = "podman-node"


def _as_played(pod: dict[str, Any], name: str | None = None) -> dict[str, Any]:
    """POD as a kubelet on NODE would run it: the downward API's node name and `$(NODE_NAME)`
    in args filled in (podman 4.3 supports neither)."""
    if name is not None:
        pod["metadata"] = {**pod.get("metadata", {}), "name": name}
    for container in pod["spec"].get("initContainers", []) + pod["spec"]["containers"]:
        for variable in container.get("env", []):
            field = variable.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")
            if field == "spec.nodeName":
                variable.pop("valueFrom")
                variable["value"] = NODE
        container["args"] = [a.replace("$(NODE_NAME)", NODE) for a in container.get("args", [])]
    return pod


def _play(
    podman: Callable[..., subprocess.CompletedProcess[str]],
    pod: dict[str, Any],
    rendered: Path,
    path: Path,
) -> None:
    path.write_text(yaml.safe_dump(pod))
    played = podman("kube", "play", "--configmap", str(rendered / "configmap.yaml"), str(path))
    assert played.returncode == 0, played.stdout + played.stderr
