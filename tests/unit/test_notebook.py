"""notebook: rendered: the image step, the supervised launcher (parsed by the real bash), the
compose publications, the ssh-config forwards, per-member ports, and refusals. Served for real
in tests/e2e/test_notebook.py."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from envkit.errors import ConfigError
from envkit.plan.box.access import member_port
from envkit.render.files import render_files
from envkit.render.ssh_config import ssh_config_blocks
from tests.helpers import plan_text

KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJ4ZbOKd5mTeWjQrRWuSf8sPDFMZnLCaZVr1TNk93NyB a@b"
BASE = f"name: lab\nssh:\n  authorized_keys: ['{KEY}']\n"
ON = "notebook:\n  enabled: true\n"


def test_off_by_default_renders_nothing_of_it(tmp_path: Path) -> None:
    files = render_files(plan_text(BASE, tmp_path))
    assert "jupyter" not in files["Dockerfile"] and "envkit/runtime/notebook.sh" not in files
    assert "8888" not in files["docker-compose.yml"]


def test_the_image_installs_pinned_jupyterlab_and_registers_the_kernel(tmp_path: Path) -> None:
    text = ON + "  jupyterlab: '4.6.6'\n  kernel: vision\n  tensorboard:\n    enabled: true\n"
    files = render_files(plan_text(BASE + text, tmp_path))
    docker = files["Dockerfile"]
    assert "jupyterlab==4.6.6 ipykernel tensorboard==2.21.0" in docker
    assert "python -m ipykernel install --prefix /usr/local --name vision" in docker
    assert (
        "install -m 0755 /opt/envkit/runtime/notebook.sh /usr/local/bin/envkit-notebook" in docker
    )
    assert "/usr/local/bin/envkit-notebook serve" in files["envkit/runtime/entrypoint.sh"]
    script = tmp_path / "notebook.sh"
    script.write_text(files["envkit/runtime/notebook.sh"])
    assert subprocess.run(["bash", "-n", str(script)], check=False).returncode == 0
    launcher = files["envkit/runtime/notebook.sh"]
    assert "JUPYTER_TOKEN=" in launcher and "--IdentityProvider.token" not in launcher
    assert "runuser -u" in launcher and "--port=8888" in launcher


def test_published_on_loopback_and_forwarded_by_ssh_config(tmp_path: Path) -> None:
    plan = plan_text(BASE + ON + "  tensorboard:\n    enabled: true\n", tmp_path)
    compose = yaml.safe_load(render_files(plan)["docker-compose.yml"])
    ports = compose["services"]["lab"]["ports"]
    assert "127.0.0.1:8888:8888" in ports and "127.0.0.1:6006:6006" in ports
    blocks = ssh_config_blocks(plan)
    assert "LocalForward 8888 127.0.0.1:8888" in blocks
    assert "LocalForward 6006 127.0.0.1:6006" in blocks


def test_per_member_ports_are_derived_like_ssh_ports(tmp_path: Path) -> None:
    key = KEY
    team = (
        "team:\n  mode: per-member\n  members:\n"
        f"    - name: alice\n      keys: ['{key}']\n    - name: bob\n      keys: ['{key} x']\n"
    )
    plan = plan_text(BASE + ON + team, tmp_path)
    ports = {s.member: s.notebook_port for s in plan.services}
    assert ports == {"alice": member_port(8888, "alice"), "bob": member_port(8888, "bob")}
    alone = plan_text(BASE + ON + team.split("    - name: bob")[0], tmp_path)
    assert alone.services[0].notebook_port == ports["alice"]  # bob leaving moves nobody


@pytest.mark.parametrize(("text", "field"), [
    (ON + "  jupyterlab: latest\n", "notebook.jupyterlab"),
    (ON + "  kernel: 'My Kernel'\n", "notebook.kernel"),
    (ON + "  port: 8822\n", "notebook.port"),  # sshd's port
    (ON + "  tensorboard:\n    logdir: '../etc'\n", "notebook.tensorboard.logdir"),
    (ON + "  bind: 'example.org'\n", "notebook.bind"),
])  # fmt: skip
def test_bad_notebook_config_names_the_field(text: str, field: str, tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        plan_text(BASE + text, tmp_path)
    assert field in str(caught.value)


def test_doctor_warns_when_the_notebook_is_published_beyond_loopback(tmp_path: Path) -> None:
    from envkit.doctor.facts import HostRecord
    from envkit.doctor.findings import check_exposure

    quiet = check_exposure(HostRecord(True, plan=plan_text(BASE + ON, tmp_path)))
    assert quiet.status == "ok", quiet
    loud = check_exposure(
        HostRecord(True, plan=plan_text(BASE + ON + "  bind: 0.0.0.0\n", tmp_path))
    )
    assert loud.status == "warn" and "0.0.0.0:8888 (notebook, lab)" in loud.message
    assert loud.fix is not None and "notebook.bind" in loud.fix
