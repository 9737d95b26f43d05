"""`envkit ssh-config` blocks: one per container, with the fields OpenSSH and VS Code need."""

from __future__ import annotations

from pathlib import Path

import pytest

from envkit.errors import EnvkitError
from envkit.plan.box.access import member_port
from envkit.render.ssh_config import ssh_config_blocks
from tests.helpers import EXAMPLES, plan_example, plan_text


def test_one_block_per_member_with_ports_and_accept_new() -> None:
    text = ssh_config_blocks(plan_example("team-of-three"), identity="~/.ssh/team")
    derived = {m: member_port(8830, m) for m in ("alice", "bob")}
    for member, port in (("alice", derived["alice"]), ("bob", derived["bob"]), ("carol", 8840)):
        block = text.split(f"Host nlp-team-{member}\n", 1)[1].split("\n\n", 1)[0]
        assert f"    Port {port}" in block and f"    User {member}" in block
        assert "    IdentityFile ~/.ssh/team" in block
        assert "    StrictHostKeyChecking accept-new" in block
        assert "    HostName localhost" in block


def test_member_filter_and_unknown_member() -> None:
    plan = plan_example("team-of-three")
    only = ssh_config_blocks(plan, member="bob")
    assert "Host nlp-team-bob" in only and "nlp-team-alice" not in only
    with pytest.raises(EnvkitError, match="alice, bob, carol"):
        ssh_config_blocks(plan, member="dave")


def test_loopback_publish_is_reached_through_the_server(tmp_path: Path) -> None:
    """The default publishes sshd on the server's loopback only: a laptop jumps through the
    server's own sshd instead of reaching the container's port over the network."""
    text = ssh_config_blocks(plan_example("seed-pytorch-1.11"), host="gpu-box.lab")
    assert (
        "Host reignite\n    HostName localhost\n    Port 8822\n    User dev\n"
        "    ProxyJump gpu-box.lab\n" in text
    )
    local = ssh_config_blocks(plan_example("seed-pytorch-1.11"))
    assert "HostName localhost" in local and "ProxyJump" not in local


def test_explicit_all_interfaces_publish_connects_directly(tmp_path: Path) -> None:
    plan = plan_text("name: lab\nssh:\n  bind: 0.0.0.0\n", tmp_path)
    text = ssh_config_blocks(plan, host="gpu-box.lab")
    assert "Host lab\n    HostName gpu-box.lab\n    Port 8822\n" in text
    assert "ProxyJump" not in text


def test_shared_mode_member_gets_the_shared_block_and_unknown_members_are_refused(
    tmp_path: Path,
) -> None:
    key = (EXAMPLES / "seed-pytorch-1.11" / "keys" / "lead.pub").read_text().strip()
    plan = plan_text(
        f"name: lab\nssh:\n  port: 2200\nteam:\n  members:\n    - {{name: amy, keys: ['{key}']}}\n",
        tmp_path,
    )
    block = ssh_config_blocks(plan, member="amy")
    assert "Host lab\n" in block and "    Port 2200" in block and "    User dev" in block
    with pytest.raises(EnvkitError, match="choose one of: amy"):
        ssh_config_blocks(plan, member="zed")
    solo = plan_example("seed-pytorch-1.11")
    with pytest.raises(EnvkitError, match=r"add the member to team\.members"):
        ssh_config_blocks(solo, member="amy")


def _key(home: Path, name: str) -> str:
    import subprocess

    (home / ".ssh").mkdir(exist_ok=True)
    path = home / ".ssh" / name
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True)
    return (home / ".ssh" / f"{name}.pub").read_text().strip()


def test_ssh_config_names_the_private_half_of_an_authorized_key_this_machine_has(
    tmp_path: Path,
) -> None:
    """The config authorizes lab_key's public half; the machine also has an unrelated
    id_ed25519. The block names ~/.ssh/lab_key, never a file that would not log in."""
    from tests.helpers import envkit

    home = tmp_path / "home"
    home.mkdir()
    lab = _key(home, "lab_key")
    _key(home, "id_ed25519")
    project = tmp_path / "proj"
    project.mkdir()
    (project / "envkit.yaml").write_text(f"name: lab\nssh:\n  authorized_keys: ['{lab}']\n")
    env = {"HOME": str(home), "SSH_AUTH_SOCK": ""}
    text = envkit("ssh-config", cwd=project, env=env).stdout
    assert "    IdentityFile ~/.ssh/lab_key\n    IdentitiesOnly yes" in text, text
    (home / ".ssh" / "lab_key").unlink()  # the public half alone logs no one in
    text = envkit("ssh-config", cwd=project, env=env).stdout
    assert "IdentityFile ~/" not in text and "IdentitiesOnly" not in text, text
    assert "# IdentityFile: none of the 1 authorized key(s)" in text
