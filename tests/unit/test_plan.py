"""Decisions the plan makes: images, python providers, torch index, mirrors, keys, ports."""

from __future__ import annotations

from pathlib import Path

import pytest

from envkit.errors import ConfigError
from tests.helpers import EXAMPLES, plan_example, plan_text

KEY = (EXAMPLES / "seed-pytorch-1.11" / "keys" / "lead.pub").read_text().strip()


def test_seed_equivalent() -> None:
    plan = plan_example("seed-pytorch-1.11")
    assert plan.image.base == "pytorch/pytorch:1.11.0-cuda11.3-cudnn8-runtime"
    assert plan.torch.preinstalled
    assert plan.pip.index_url == "https://mirrors.bfsu.edu.cn/pypi/web/simple"
    assert [f.archive_url for f in plan.apt.families] == [
        "https://repo.huaweicloud.com/debian",
        "https://repo.huaweicloud.com/ubuntu",
        "https://repo.huaweicloud.com/ubuntu-ports",
    ]
    assert plan.runtime.shm_size == "32gb" and plan.services[0].ssh_port == 8822
    assert plan.services[0].keys == (KEY,)


def test_cuda_flavor_uses_miniforge_and_pypis_torch_through_the_mirror() -> None:
    plan = plan_example("cuda-conda-tuna")
    assert plan.image.base == "nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04"
    assert plan.python.provider == "miniforge"
    assert plan.python.bin_dir == "/opt/conda/envs/speech/bin"
    # torch 2.5.1's CUDA 12.4 build is PyPI's own wheel: it comes through TUNA's PyPI.
    assert plan.torch.source == "pypi" and plan.torch.index_url is None
    assert plan.pip.index_url == "https://pypi.tuna.tsinghua.edu.cn/simple"
    assert plan.conda.dependencies[0] == "python=3.11"
    assert plan.runtime.shm_size is None and plan.runtime.ipc_host


def test_a_build_pypi_does_not_carry_comes_from_the_pytorch_index(tmp_path: Path) -> None:
    text = "name: a\nbase: {flavor: cuda}\ntorch: '2.5.1'\ncuda: '12.1'\n"
    plan = plan_text(text, tmp_path)
    assert plan.torch.source == "pytorch-index"
    assert plan.torch.index_url == "https://download.pytorch.org/whl/cu121"
    refused = text + "torch_source: pypi\n"
    with pytest.raises(ConfigError) as caught:
        plan_text(refused, tmp_path)
    assert "torch_source" in str(caught.value) and "CUDA 12.4 build" in str(caught.value)


def test_custom_image_without_torch_uses_a_venv_over_system_python() -> None:
    plan = plan_example("debian-bookworm-cpu")
    assert plan.python.provider == "venv"
    assert plan.torch.version is None and plan.torch.preinstalled
    assert {"python3", "python3-venv", "python3-torch"} <= set(plan.packages.apt)
    assert not plan.verify.require_gpu


def test_cpu_torch_on_custom_image(tmp_path: Path) -> None:
    plan = plan_text(
        "name: a\nbase: {flavor: custom, image: 'ubuntu:24.04'}\ntorch: '2.6.0'\ncuda: cpu\n",
        tmp_path,
    )
    assert plan.torch.index_url == "https://download.pytorch.org/whl/cpu"
    assert plan.python.provider == "venv"  # no python: pinned, so the image's own python3 serves


def test_http_mirror_hosts_become_trusted(tmp_path: Path) -> None:
    plan = plan_text(
        "name: a\nmirrors:\n  pip: http://127.0.0.1:8080/simple\n  trusted_hosts: [127.0.0.1]\n",
        tmp_path,
    )
    assert plan.pip.trusted_hosts == ("127.0.0.1", "127.0.0.1:8080")


def test_defaults_channel_maps_to_mirror(tmp_path: Path) -> None:
    plan = plan_text(
        "name: a\nbase: {flavor: cuda}\nconda:\n  channels: [pytorch, defaults]\n"
        "mirrors: {preset: tuna}\n",
        tmp_path,
    )
    base = "https://mirrors.tuna.tsinghua.edu.cn/anaconda"
    assert plan.conda.rc.default_channels == (
        f"{base}/pkgs/main",
        f"{base}/pkgs/r",
        f"{base}/pkgs/msys2",
    )
    # Every channel TUNA serves goes through it, listed or not (`conda install -c bioconda`).
    routed = dict(plan.conda.rc.custom_channels)
    assert routed["pytorch"] == routed["bioconda"] == f"{base}/cloud"
    assert plan.conda.rc.channels == ("pytorch", "defaults")


def test_team_ports_are_deterministic_and_keys_separate() -> None:
    plan = plan_example("team-of-three")
    ports = {s.member: s.ssh_port for s in plan.services}
    assert ports["carol"] == 8840, "a port set in envkit.yaml is kept"
    assert all(8831 <= ports[m] <= 9830 for m in ("alice", "bob"))
    assert plan_example("team-of-three").services == plan.services, "same config, same ports"
    alice = next(s for s in plan.services if s.member == "alice")
    bob = next(s for s in plan.services if s.member == "bob")
    assert alice.uid == 1001 and bob.uid == 1000
    assert set(alice.keys) & set(bob.keys) == {KEY}, "only the lead's key is shared"


def test_shared_team_gets_one_container_with_every_key(tmp_path: Path) -> None:
    text = (
        f"name: a\nssh:\n  authorized_keys: ['{KEY}']\nteam:\n  members:\n"
        f"    - {{name: amy, keys: ['{KEY}']}}\n"
    )
    plan = plan_text(text, tmp_path)
    assert len(plan.services) == 1 and plan.services[0].keys == (KEY,)


def test_member_uid_falls_back_to_ssh_uid_then_host(tmp_path: Path) -> None:
    from envkit.config.load import load_text
    from envkit.plan import HostFacts, make_plan

    text = (
        f"name: a\nssh:\n  uid: 2000\nteam:\n  mode: per-member\n  members:\n"
        f"    - {{name: amy, keys: ['{KEY}']}}\n    - {{name: bob, keys: ['{KEY}'], uid: 3000}}\n"
    )
    plan = make_plan(load_text(text), HostFacts(uid=4242, gid=4242))
    assert [s.uid for s in plan.services] == [2000, 3000]
    no_ssh_uid = make_plan(
        load_text(text.replace("ssh:\n  uid: 2000\n", "")), HostFacts(4242, 4242)
    )
    assert [s.uid for s in no_ssh_uid.services] == [4242, 3000]


CERT = """-----BEGIN CERTIFICATE-----
MIIBszCCAVmgAwIBAgIUTestOnlyNotARealCertificateAAAAAAAwCgYIKoZIzj0E
-----END CERTIFICATE-----
"""


def test_extra_ca_certificates_are_shipped_and_trusted(tmp_path: Path) -> None:
    from envkit.render.files import render_files

    (tmp_path / "proxy.crt").write_text("subject=proxy\n" + CERT)
    plan = plan_text("name: a\nmirrors:\n  ca_certificates: [proxy.crt]\n", tmp_path)
    files = render_files(plan)
    assert files["envkit/ca/00-envkit.crt"] == CERT, "only the PEM block is copied"
    assert "cert = /etc/ssl/certs/ca-certificates.crt" in files["envkit/pip.conf"]
    assert 'ssl_verify: "/etc/ssl/certs/ca-certificates.crt"' in files["envkit/condarc"]
    assert "COPY envkit/ca/ /usr/local/share/ca-certificates/envkit/" in files["Dockerfile"]
    assert "update-ca-certificates" in files["Dockerfile"]


def test_ca_certificate_file_must_be_a_certificate(tmp_path: Path) -> None:
    import pytest

    from envkit.errors import ConfigError

    (tmp_path / "key.pem").write_text(
        "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n"
    )
    (tmp_path / "empty.crt").write_text("nothing here\n")
    for name, phrase in (
        ("key.pem", "PRIVATE"),
        ("empty.crt", "no PEM"),
        ("missing.crt", "cannot read"),
    ):
        with pytest.raises(ConfigError) as caught:
            plan_text(f"name: a\nmirrors:\n  ca_certificates: [{name}]\n", tmp_path)
        assert caught.value.issues[0].path == "mirrors.ca_certificates[0]"
        assert phrase in caught.value.issues[0].problem
        assert "MIIE" not in str(caught.value)


def test_member_ports_never_move_when_others_join_or_leave(tmp_path: Path) -> None:
    def ports(names: list[str]) -> dict[str | None, int]:
        members = "".join(f"    - {{name: {n}, keys: ['{KEY}']}}\n" for n in names)
        text = f"name: a\nssh:\n  port: 2222\nteam:\n  mode: per-member\n  members:\n{members}"
        return {s.member: s.ssh_port for s in plan_text(text, tmp_path).services}

    team = ["alice", "bob", "carol", "dave", "erin"]
    everyone = ports(team)
    assert len(set(everyone.values())) == 5 and all(2223 <= p <= 3222 for p in everyone.values())
    for leaver in team:
        rest = ports([n for n in team if n != leaver])
        assert rest == {n: p for n, p in everyone.items() if n != leaver}, leaver
    assert ports([*team, "frank"]) == {**everyone, "frank": ports(["frank"])["frank"]}


def test_two_members_on_one_derived_port_is_a_clear_error(tmp_path: Path) -> None:
    from envkit.errors import ConfigError

    # u11 and u32 derive the same port (crc32 % 1000): the lead is told to set one.
    members = "".join(f"    - {{name: {n}, keys: ['{KEY}']}}\n" for n in ("u11", "u32"))
    text = f"name: a\nssh:\n  port: 2222\nteam:\n  mode: per-member\n  members:\n{members}"
    try:
        plan_text(text, tmp_path)
    except ConfigError as exc:
        message = str(exc)
    else:
        raise AssertionError("a port shared by two members was accepted")
    assert "team.members[1].port" in message and "2408" in message
    assert "member u32" in message and "member u11" in message
    fixed = text.replace("{name: u32,", "{name: u32, port: 2300,")
    assert {s.ssh_port for s in plan_text(fixed, tmp_path).services} == {2408, 2300}
