"""The Job's pod program run for real, as a kubelet would run it: the rendered container's
command and args (with $(NODE_NAME) expanded), in a container of the environment's image, the
ConfigMap's bundle mounted at its path. No cluster is reachable here (docs/cluster.md): Docker
stands in for the kubelet; the program, the bundle and the merge are the real ones."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import uuid
from pathlib import Path

import yaml

from tests.e2e.images import TEST_LABEL, docker


def test_pod_logs_merge_into_one_report_with_a_failing_node(
    env_image: str, project_dir: Path, tmp_path: Path
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "envkit", "k8s", "render", "--out", str(tmp_path / "k8s")],
        cwd=project_dir, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    job = yaml.safe_load((tmp_path / "k8s" / "job.yaml").read_text())
    configmap = yaml.safe_load((tmp_path / "k8s" / "configmap.yaml").read_text())
    bundle_dir = tmp_path / "checks"
    bundle_dir.mkdir()
    for key, data in configmap["binaryData"].items():
        (bundle_dir / key).write_bytes(base64.b64decode(data))
    container = job["spec"]["template"]["spec"]["containers"][0]
    config = json.loads(container["args"][0])
    config["only"] = ["tensor.creation", "system.shm"]  # narrowed for time; the rest as rendered
    logs: list[str] = []
    for node, shm in (("node-a", "2g"), ("node-b", "1m")):  # node-b: /dev/shm far too small
        args = json.dumps(config).replace("$(NODE_NAME)", node)  # what the kubelet does
        name = f"envkit-test-k8s-{uuid.uuid4().hex[:8]}"
        try:
            run = docker(
                "run", "--name", name, "--hostname", name, "--label", f"{TEST_LABEL}=container",
                "--shm-size", shm, "-e", f"NODE_NAME={node}",
                "-v", f"{bundle_dir}:/opt/envkit-checks:ro",
                "--entrypoint", container["command"][0], env_image,
                *container["command"][1:], args,
                check=False, timeout=600,
            )  # fmt: skip
            assert run.returncode == (0 if node == "node-a" else 1), run.stdout + run.stderr
            logs += [f"[pod/{name}/checks] {line}" for line in run.stdout.splitlines()]
        finally:
            docker("rm", "-f", name, check=False)
    log_file = tmp_path / "logs.txt"
    log_file.write_text("\n".join(logs) + "\n")
    out = tmp_path / "merged.json"
    merged = subprocess.run(
        [sys.executable, "-m", "envkit", "k8s", "merge", str(log_file), "--expect", "2",
         "--json-file", str(out)],
        cwd=project_dir, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert merged.returncode == 1, merged.stdout + merged.stderr
    rows = {row["target"]: row["state"] for row in json.loads(out.read_text())["per_target"]}
    assert rows == {"k8s://node/node-a": "passed", "k8s://node/node-b": "failed"}
    missing = subprocess.run(
        [sys.executable, "-m", "envkit", "k8s", "merge", str(log_file), "--expect-node", "node-c"],
        cwd=project_dir, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert missing.returncode == 3 and "k8s://node/node-c" in missing.stdout
